-- expect: 4 the rest of its log is dropped
-- issue 15 point 1: a hook logging as fast as it can until --timeout
-- stops being recorded (plan steps, the report) after 20000 lines.
for i = 1, 1e7 do log.step("step " .. i) end
