-- expect: 4 the rest of its log is dropped
-- docs/security.md "Unbounded run record": a hook logging as fast as it
-- can until --timeout stops being recorded (plan steps, the report) after
-- 20000 lines.
-- timeout: 12
-- (a log line is one request to the broker: 20000 of them take ~2 s, under
-- ASan too, so a loaded machine missed the limit within 3 s; 12 s leaves a
-- busy machine the margin, as the whole run lasts its --timeout)
for i = 1, 1e7 do log.step("step " .. i) end
