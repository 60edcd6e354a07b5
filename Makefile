# hybridlab: a thin front for CMake (Ninja, build dir build/). Every target builds what it needs first.
#   make                 build everything (after checking the Debian packages: scripts/install-deps.sh)
#   make test            build and run every test through CTest
#   make golden          regenerate the oracle's golden op tensors in golden/ops/
#   make experiment NAME=ssm_scan [DEVICE=...] [QUICK=1] [FULL=1]
#                        run an experiment (every variant of its ops, checked and timed) and write
#                        reports/<device>/<NAME>.{json,md}; CPU Vulkan devices default to QUICK shapes
#   make experiments     list the experiments
#   make report          rebuild reports/README.md, the index across devices and experiments
#   make test-asan [ASAN_TESTS=<ctest regex>] [ASAN_TARGETS="<targets>"]
#                        build the whole test suite with AddressSanitizer + UndefinedBehaviorSanitizer in
#                        build-asan/ and run it (every test, or those ASAN_TESTS matches; ASAN_TARGETS builds only
#                        those targets, which must hold the tests ASAN_TESTS selects); leak suppressions
#                        (third-party code only, each with its evidence) in tests/sanitizers/lsan.supp
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="safetensors gguf ..."]
#                        build the libFuzzer targets of tests/fuzz/ with clang in build-fuzz/ and run each for
#                        FUZZ_SECONDS; new inputs go to build-fuzz/corpus/<name>/, failures to build-fuzz/findings/
#   make clean           remove build/
BUILD ?= build
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
JOBS  ?= $(shell nproc)
# CMake and CTest from .venv/ when it is there (scripts/install-deps.sh puts them there: Halide 21's CMake
# package, for the Halide variants, needs CMake >= 3.28; Debian 12 has 3.25), else Debian's. Expanded when a
# recipe runs, so after `deps` has created the venv. A build/ configured before the venv existed keeps
# Halide off: `make clean` once.
CMAKE = $(shell test -x $(CURDIR)/.venv/bin/cmake && echo $(CURDIR)/.venv/bin/cmake || echo cmake)
CTEST = $(shell test -x $(CURDIR)/.venv/bin/ctest && echo $(CURDIR)/.venv/bin/ctest || echo ctest)
ASAN_BUILD ?= build-asan
ASAN_TESTS ?=
ASAN_TARGETS ?=
# Any sanitizer report fails the test that produced it (the build passes -fno-sanitize-recover=all).
# The Vulkan loader dlcloses the driver (lavapipe) and the layers at vkDestroyInstance, and the loader itself is
# dlclosed after it; LeakSanitizer runs at exit, when the memory their globals still hold looks leaked from
# "<unknown module>" (unmapped, so no suppression can name it). ASAN_PRELOAD keeps those of them that are installed
# mapped until exit: that memory is then reachable, and anything else is reported with its module's name
# (tests/sanitizers/lsan.supp). verify_asan_link_order=0 lets them come before the ASan runtime.
ASAN_PRELOAD = $(wildcard $(addprefix /usr/lib/x86_64-linux-gnu/,libvulkan.so.1 libvulkan_lvp.so \
  libVkLayer_MESA_device_select.so libVkLayer_khronos_validation.so))
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:check_initialization_order=1:strict_string_checks=1:verify_asan_link_order=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
  LD_PRELOAD='$(ASAN_PRELOAD)'
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= safetensors safetensors_index gguf config tokens plan tokenizer

.PHONY: all deps configure test test-asan fuzz golden experiment experiments report clean

all: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

deps:
	@scripts/install-deps.sh

configure: deps
	@[ -f $(BUILD)/build.ninja ] || $(CMAKE) -S . -B $(BUILD) -G Ninja

test: all
	cd $(BUILD) && $(CTEST) --output-on-failure -j $(JOBS)

test-asan: deps
	@[ -f $(ASAN_BUILD)/build.ninja ] || $(CMAKE) -S . -B $(ASAN_BUILD) -G Ninja -DHYBRIDLAB_SANITIZE=address,undefined
	$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS) $(if $(ASAN_TARGETS),--target $(ASAN_TARGETS))
	cd $(ASAN_BUILD) && $(SANITIZER_ENV) $(CTEST) --output-on-failure --no-tests=error -j $(JOBS) $(if $(ASAN_TESTS),-R '$(ASAN_TESTS)')

fuzz: deps
	@tests/fuzz/check_toolchain.sh clang++
	@[ -f $(FUZZ_BUILD)/build.ninja ] || CC=clang CXX=clang++ $(CMAKE) -S . -B $(FUZZ_BUILD) -G Ninja -DHYBRIDLAB_FUZZ=ON \
	  -DHYBRIDLAB_HALIDE=OFF
	$(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@mkdir -p $(FUZZ_BUILD)/findings
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t && echo "fuzz_$$t: $(FUZZ_SECONDS) s" && \
	  $(FUZZ_BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 -dict=tests/fuzz/$$t.dict \
	    -artifact_prefix=$(FUZZ_BUILD)/findings/$$t- $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done

golden: all
	$(BUILD)/hybridlab golden --out golden/ops

experiment: all
	@[ -n "$(NAME)" ] || { echo "usage: make experiment NAME=<name> (make experiments lists them)"; exit 2; }
	$(BUILD)/hybridlab experiment $(NAME) $(if $(DEVICE),--device '$(DEVICE)') $(if $(QUICK),--quick) $(if $(FULL),--full)

experiments: all
	@$(BUILD)/hybridlab experiments

report:
	$(PYTHON) scripts/report.py --index reports

clean:
	rm -rf $(BUILD)
