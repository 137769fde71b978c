-- expect: 4 scheme file is not allowed: only https URLs
net.fetch("file:///etc/passwd")
