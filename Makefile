# syncsight — top-level build.  `make` builds the shim and the CLI, `make test`
# runs the CPU suite (no GPU needed), `make gpu-test` runs the GPU suite.
# Each part of the tree keeps its rules in its own fragment (*.mk) included
# below; this file holds what they share.

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build
CC        ?= cc
PYTHON    ?= python3
NVCC      ?= $(CUDA_HOME)/bin/nvcc
VERSION   := 0.1.0

# CUPTI's headers and library live in the toolkit's include/lib64 on CUDA 13
# packages and under extras/CUPTI on older layouts: accept both.
CUPTI_INC ?= $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/include/cupti.h $(CUDA_HOME)/include/cupti.h))
CUPTI_INC_DIR := $(patsubst %/,%,$(dir $(CUPTI_INC)))
CUPTI_LIB ?= $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so $(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/targets/x86_64-linux/lib/libcupti.so $(CUDA_HOME)/lib/libcupti.so $(CUDA_HOME)/lib/libcupti.so.13))
CUPTI_LIB_DIR := $(patsubst %/,%,$(dir $(CUPTI_LIB)))

WARN      := -Wall -Wextra
CFLAGS    ?= -O2 -g
BASE_CFLAGS := -std=gnu11 $(WARN) -Iinclude -DSS_VERSION=\"$(VERSION)\"
# The analyzer's test build: AddressSanitizer + UndefinedBehaviorSanitizer.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

COMMON_SRCS := $(wildcard common/*.c)

.PHONY: all test gpu-test fixtures install clean bench bench-analyzer fuzz demo check-cuda
all: $(BUILD)/libsyncsight.so $(BUILD)/syncsight

check-cuda:
	@test -f "$(CUDA_HOME)/include/cuda_runtime_api.h" || { echo "error: CUDA headers not found under CUDA_HOME=$(CUDA_HOME) (set CUDA_HOME to the toolkit's prefix)" >&2; exit 1; }
	@test -n "$(CUPTI_INC)" || { echo "error: CUPTI headers (cupti.h) not found under CUDA_HOME=$(CUDA_HOME)/include or extras/CUPTI/include" >&2; exit 1; }
	@test -n "$(CUPTI_LIB)" || { echo "error: libcupti.so not found under CUDA_HOME=$(CUDA_HOME) (lib64 or extras/CUPTI/lib64)" >&2; exit 1; }

include $(wildcard preload/api.mk preload/preload.mk analyzer/symbolize.mk analyzer/analyzer.mk tests/tests.mk test_programs/test_programs.mk bench/bench.mk fuzz/fuzz.mk)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/syncsight
	install -m 0755 $(BUILD)/syncsight $(DESTDIR)$(PREFIX)/bin/syncsight
	install -m 0755 $(BUILD)/libsyncsight.so $(DESTDIR)$(PREFIX)/lib/syncsight/libsyncsight.so
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 docs/syncsight.1 $(DESTDIR)$(PREFIX)/share/man/man1/syncsight.1

clean:
	rm -rf $(BUILD)
