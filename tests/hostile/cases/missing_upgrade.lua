-- expect: 4 field 'upgrade' is missing
return { version = "2.0.0", from = ">=1.0.0", permissions = {} }
