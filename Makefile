# hybridlab: a thin front for CMake (Ninja, build dir build/). Every target builds what it needs first.
#   make                 build everything (after checking the Debian packages: scripts/install-deps.sh)
#   make test            build and run every test through CTest
#   make golden          regenerate the oracle's golden op tensors in golden/ops/
#   make experiment NAME=ssm_scan [DEVICE=...] [QUICK=1] [FULL=1]
#                        run an experiment (every variant of its ops, checked and timed) and write
#                        reports/<device>/<NAME>.{json,md}; CPU Vulkan devices default to QUICK shapes
#   make experiments     list the experiments
#   make report          rebuild reports/README.md, the index across devices and experiments
#   make clean           remove build/
BUILD ?= build
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
JOBS  ?= $(shell nproc)

.PHONY: all deps configure test golden experiment experiments report clean

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

experiment: all
	@[ -n "$(NAME)" ] || { echo "usage: make experiment NAME=<name> (make experiments lists them)"; exit 2; }
	$(BUILD)/hybridlab experiment $(NAME) $(if $(DEVICE),--device '$(DEVICE)') $(if $(QUICK),--quick) $(if $(FULL),--full)

experiments: all
	@$(BUILD)/hybridlab experiments

report:
	$(PYTHON) scripts/report.py --index reports

clean:
	rm -rf $(BUILD)
