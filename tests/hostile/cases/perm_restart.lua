-- expect: 4 needs "restart:kubelite"
service.restart("kubelite")
