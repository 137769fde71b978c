-- expect: 4 bad argument #1 to 'exists' \(a certificate's file name expected \(no / or \.\.\)
config.exists("certs:../certs/ca.key")
