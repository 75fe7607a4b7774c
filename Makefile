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

$(VENV)/.stamp: python/requirements.txt
	@python3 -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -r python/requirements.txt
	@touch $@

venv: deps $(VENV)/.stamp

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DTESSERA_PYTHON=$(abspath $(PY))

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: venv build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	$(MAKE) test-sanitize

# The C tests again, built with AddressSanitizer and UBSan (Open MPI's own
# allocations at exit are not Tessera's: leak checking is off).
SAN_BUILD ?= build-sanitize
test-sanitize: venv
	cmake -S . -B $(SAN_BUILD) $(CMAKE_FLAGS) -DTESSERA_SANITIZE=address,undefined \
	      -DTESSERA_FORTRAN=OFF -DTESSERA_PYTHON=$(abspath $(PY)) >/dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS) --timeout 300 -R '^(mpi|hints|plan|faults)\.' -E 'bench'

demo: venv build
	PATH="$(abspath $(BUILD))/apps/bench:$$PATH" PYTHONPATH=python $(PY) -m tessera demo --bench $(BUILD)/apps/bench/tessera-bench

clean:
	rm -rf $(BUILD) $(SAN_BUILD)
