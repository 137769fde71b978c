-- expect: 4 needs "net:example.com"
net.download("https://example.com/x", { sha256 = string.rep("0", 64) })
