-- expect: 4 undeclared global 'package'
package.loadlib("/lib/x86_64-linux-gnu/libc.so.6", "system")
