-- expect: 4 .
-- the runner plants state/evil -> /tmp before the run
config.write("state:evil/uphook-pwned", "pwned")
