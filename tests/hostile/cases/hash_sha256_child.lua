-- expect: 0 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
-- hash.sha256 runs in the confined child: OpenSSL is primed before the
-- filter goes on (its first digest read its configuration: SIGSYS).
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  upgrade = function() log.info(hash.sha256("abc")) end }
