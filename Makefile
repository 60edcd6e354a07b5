# hybridlab: a thin front for CMake (Ninja, build dir build/). Every target builds what it needs first.
#   make                 build everything (after checking the Debian packages: scripts/install-deps.sh)
#   make test            build and run every test through CTest
#   make golden          regenerate the oracle's golden op tensors in golden/ops/
#   make clean           remove build/
BUILD ?= build
JOBS  ?= $(shell nproc)

.PHONY: all deps configure test golden clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps.sh

configure: deps
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja

test: all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

golden: all
	$(BUILD)/hybridlab golden --out golden/ops

clean:
	rm -rf $(BUILD)
