-- expect: 4 path leaves its root: evil/uphook-pwned
-- the runner plants state/evil -> a folder outside before the run (and
-- fails the case if a file appears there)
config.write("state:evil/uphook-pwned", "pwned")
