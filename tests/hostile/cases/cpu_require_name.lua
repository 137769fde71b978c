-- expect: 4 module .* not found
-- docs/security.md "Broker work outside the timeout": the broker's check of a
-- module name is linear; a pattern with two greedy classes took the square of
-- this name's length.
require(string.rep("a", 8 << 20) .. "-")
