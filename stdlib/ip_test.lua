-- ip: the rules of Python's ipaddress.ip_address, which MicroK8s' own
-- scripts (find-resolv-conf.py) use.
local t = require "uphook.test"
local ip = require "ip"

t.case("IPv4: four decimal parts 0-255, no leading zeros", function()
  t.eq(ip.parse("10.152.183.10"), { version = 4, bytes = { 10, 152, 183, 10 } })
  t.eq(ip.parse("0.0.0.0").bytes, { 0, 0, 0, 0 })
  t.eq(ip.parse("255.255.255.255").bytes, { 255, 255, 255, 255 })
  for _, bad in ipairs { "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4",
                         "1.2.3.", ".1.2.3", "1..2.3", "a.b.c.d", "1.2.3.4 ",
                         "", "1.2.3.1000" } do
    t.eq(ip.parse(bad), nil, bad)
  end
end)

t.case("IPv6: eight groups, one ::, an IPv4 tail", function()
  t.eq(ip.parse("::1").bytes, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 })
  t.eq(ip.parse("2001:db8::8a2e:370:7334").bytes, { 0x20, 0x01, 0x0d, 0xb8, 0,
    0, 0, 0, 0, 0, 0x8a, 0x2e, 0x03, 0x70, 0x73, 0x34 })
  t.eq(ip.parse("::").version, 6)
  t.eq(ip.parse("1::").version, 6)
  t.eq(ip.parse("1:2:3:4:5:6:7:8").version, 6)
  t.eq(ip.parse("::ffff:10.0.0.1").bytes, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255,
    255, 10, 0, 0, 1 })
  t.eq(ip.parse("1:2:3:4:5:6:1.2.3.4").version, 6)
  for _, bad in ipairs { "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3",
                         ":::", "1:::2", "12345::", "g::1", ":1:2:3:4:5:6:7",
                         "1:2:3:4:5:6:7:", "::1.2.3", "1::2:3:4:5:6:7:8",
                         "fe80::1%eth0", "::ffff:256.1.1.1" } do
    t.eq(ip.parse(bad), nil, bad)
  end
end)

t.case("loopback: 127.0.0.0/8 and ::1", function()
  t.ok(ip.is_loopback(ip.parse("127.0.0.53")))
  t.ok(ip.is_loopback(ip.parse("127.255.0.1")))
  t.ok(ip.is_loopback(ip.parse("::1")))
  t.ok(not ip.is_loopback(ip.parse("10.0.0.2")))
  t.ok(not ip.is_loopback(ip.parse("::")))
  t.ok(not ip.is_loopback(ip.parse("::2")))
  t.ok(not ip.is_loopback(ip.parse("128.0.0.1")))
end)
