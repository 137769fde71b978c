-- expect: 4 undeclared global 'os'
os.execute("touch /tmp/uphook-pwned")
