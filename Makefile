# Tessera: every target installs what it needs first, so a fresh Debian
# machine goes from clone to result with one command.
BUILD ?= build
JOBS ?= 2
VENV ?= .venv
PY := $(VENV)/bin/python
CMAKE_FLAGS ?= -DTESSERA_WERROR=ON

.PHONY: all deps venv configure build test test-sanitize test-c test-python demo clean

all: build

deps:
	@scripts/install-deps.sh

# The Python tools as a package (python/pyproject.toml), editable so that
# .venv/bin/tessera and .venv/bin/python -m tessera run this checkout's code.
$(VENV)/.stamp: python/pyproject.toml
	@python3 -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -e './python[test]'
	@touch $@

venv: deps $(VENV)/.stamp

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DTESSERA_PYTHON=$(abspath $(PY))

configure: venv $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: venv build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	$(MAKE) test-sanitize

# The C tests again, built with AddressSanitizer and UBSan (no man pages: their
# programs would run under the sanitizer at build time; Open MPI's own
# allocations at exit are not Tessera's: leak checking is off). The
# decomposition matrix runs at 1-3 ranks here (4-6 in the main suite), to
# keep the whole of make test near 20 minutes on 2 cores.
SAN_BUILD ?= build-sanitize
test-sanitize: venv
	cmake -S . -B $(SAN_BUILD) $(CMAKE_FLAGS) -DTESSERA_SANITIZE=address,undefined -DTESSERA_MAN=OFF \
	      -DTESSERA_FORTRAN=OFF -DTESSERA_PYTHON=$(abspath $(PY)) >/dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS) --timeout 300 -R '^(mpi|hints|plan|faults)\.' -E 'bench|decomp\..*\.np[456]$$'

demo: venv build
	$(VENV)/bin/tessera demo --bench $(BUILD)/apps/bench/tessera-bench

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
