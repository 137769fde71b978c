-- expect: 4 needs "bin:tool"
config.write("bin:tool", "#!/bin/sh\n")
