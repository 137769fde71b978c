-- expect: 4 leaves its root|path must be
hash.file("/etc/passwd")
