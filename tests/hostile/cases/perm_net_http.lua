-- expect: 4 needs "net:http://example.com"
net.fetch("http://example.com/x")
