-- expect: 4 only https
net.fetch("file:///etc/passwd")
