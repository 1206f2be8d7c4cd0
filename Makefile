# Cairn build. `make` builds debug (-O1 -g) into build/debug; `make test`
# checks Debian dependencies, then builds and runs every test; `make asan`
# runs the tests under AddressSanitizer + UBSan; `make bench` builds -O2 and
# runs the benchmarks in tests/bench/; `make fuzz` runs the Kafka request
# decoders under libFuzzer for FUZZ_SECONDS (default 60; `make test` runs it
# too); `make layout-check` checks the tree's rules: include directions,
# file and function sizes, the pure cores, protobuf-c's reach, formatting
# (also part of `make test`); `make deps` installs what is missing.

SHELL := /bin/bash
BUILD ?= build/debug
OPT ?= -O1 -g
CC ?= cc

WARN := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Wshadow \
        -Wconversion -Wstrict-prototypes -Wimplicit-fallthrough -Wformat=2 \
        -Werror
PKGS := libuv libisal libprotobuf-c raft libcrypto zlib liblz4 libzstd snappy
TEST_PKGS := criterion
CLI_PKGS := rdkafka

GEN := $(BUILD)/gen
CPPFLAGS := -I. -I$(GEN) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
CFLAGS := $(WARN) $(OPT) -MMD -MP
LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread
TEST_LDLIBS := $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)
CLI_LDLIBS := $(shell pkg-config --libs $(CLI_PKGS) 2>/dev/null)

PROTO := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(GEN)/%.pb-c.c,$(PROTO))
PROTO_H := $(PROTO_C:.c=.h)
PROTO_OBJ := $(PROTO_C:.c=.o)

# Sources are found per folder, at any depth (broker/log/, common/kafka/...).
srcs = $(sort $(shell find $(1) -name '*.c' 2>/dev/null))
COMMON_SRC := $(call srcs,common)
BROKER_LIB_SRC := $(filter-out broker/main.c,$(call srcs,broker))
CONTROLLER_LIB_SRC := $(filter-out controller/main.c,$(call srcs,controller))
LIB_SRC := $(COMMON_SRC) $(BROKER_LIB_SRC) $(CONTROLLER_LIB_SRC)
LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRC)) $(PROTO_OBJ)
LIB := $(BUILD)/libcairn.a

TESTLIB_SRC := $(wildcard tests/lib/*.c)
# The CLI's pure modules that have unit tests of their own.
CLI_UNIT_SRC := cli/cmd/reassign/reassign_plan.c $(call srcs,cli/cmd/dump_log) \
                cli/cmd/web/lab.c cli/util/cli.c cli/util/opts.c \
                cli/cmd/status/view.c cli/client/health.c cli/util/table.c
UNIT_SRC := $(call srcs,tests/unit) $(TESTLIB_SRC) $(CLI_UNIT_SRC)
UNIT_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(UNIT_SRC))
UNIT_BIN := $(BUILD)/tests/unit_tests

CONTROLLER_BIN := $(if $(wildcard controller/main.c),$(BUILD)/cairn-controller)
BROKER_BIN := $(if $(wildcard broker/main.c),$(BUILD)/cairn-broker)
CLI_SRC := $(call srcs,cli)
CLI_BIN := $(if $(CLI_SRC),$(BUILD)/cairn)
BINS := $(CONTROLLER_BIN) $(BROKER_BIN) $(CLI_BIN)

INTEGRATION_SRC := $(wildcard tests/integration/*.c)
INTEGRATION_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(INTEGRATION_SRC))
TESTLIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TESTLIB_SRC))
INTEGRATION_BIN := $(if $(INTEGRATION_SRC),$(BUILD)/tests/integration_tests)

# `make sim` runs SEEDS seeds (default 2000) of each simulation from
# SEED_BASE (default: random), or replays SEED=N alone.
# The controller simulation (tests/simctl/): the real planners and state
# machine over canonical/raft's fixture.
SIMCTL_SRC := $(wildcard tests/simctl/*.c)
SIMCTL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(SIMCTL_SRC))
SIMCTL_BIN := $(if $(SIMCTL_SRC),$(BUILD)/tests/sim_controllers)
SIMCTL_TEST_SEEDS ?= 1000
# The broker simulation (tests/simb/): real partitions and logs on the
# simulated disk, the real planners as the controller.
SIMB_SRC := $(wildcard tests/simb/*.c)
SIMB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(SIMB_SRC))
SIMB_BIN := $(if $(SIMB_SRC),$(BUILD)/tests/sim_brokers)
SIMB_PLANTED_BIN := $(if $(SIMB_SRC),$(BUILD)/tests/sim_brokers_planted_hw)
# Two more planted bugs in production files, each caught by the broker
# simulation: reads whose batches are not checked by CRC (log_verify.c),
# and a failed fdatasync taken as done (log_sync.c).
SIMB_PLANTED_CRC_BIN := $(if $(SIMB_SRC),$(BUILD)/tests/sim_brokers_planted_crc)
SIMB_PLANTED_FSYNC_BIN := $(if $(SIMB_SRC),$(BUILD)/tests/sim_brokers_planted_fsync)
PLANTED_CRC_FROM := log_scan_next(&s, true, &h, &pos)
PLANTED_CRC_TO := log_scan_next(\&s, false, \&h, \&pos)
PLANTED_FSYNC_FROM := log_fail(l, job->rc, "fdatasync");
PLANTED_FSYNC_TO := job->rc = RC_OK;
SIMB_TEST_SEEDS ?= 2000
# Seeds of sim_brokers that once failed, replayed on every run (FAULTS.md
# in broker/log tells each story).
SIMB_PAST_SEEDS := 6069857 9023493
SIMB_PLANTED_CRC_SEEDS ?= 300
SIMB_PLANTED_FSYNC_SEEDS ?= 1000
# Its planted bug: a copy of the production plan_election.c whose clean
# election takes any acceptable replica, in the ISR or not.
SIMCTL_PLANTED_BIN := $(if $(SIMCTL_SRC),$(BUILD)/tests/sim_controllers_planted)
PLANTED_ELECT_FROM := if (meta_replica_set_contains(isr, r) \&\&
PLANTED_ELECT_TO := if (true \&\&
# The planted bug of sim_brokers_planted_hw: a copy of the production
# isr.c whose high watermark leaves out an ISR member that lags (so it
# passes what that member holds, and that member may be elected). The
# simulation's checks must catch it.
PLANTED_HW_FROM := bool counts = meta_replica_set_contains(&maximal, f->id) ||
PLANTED_HW_TO := bool counts =
SEEDS ?= 2000
SEED_BASE ?= $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')

BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

# Tests run in parallel inside Criterion; keep it to the machine's cores.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# The C integration tests, each on a cluster of its own (free ports, its own
# directory), two at a time: most of their time is spent waiting.
TEST_INTEGRATION_JOBS ?= 2

.PHONY: scenarios all deps deps-check test test-run asan bench bench-run clean cluster \
        fuzz fuzz-run layout-check sim jepsen jepsen-smoke

SIMB_PLANTED_ALL := $(SIMB_PLANTED_BIN) $(SIMB_PLANTED_CRC_BIN) \
                    $(SIMB_PLANTED_FSYNC_BIN)

all: $(LIB) $(BINS) $(UNIT_BIN) $(INTEGRATION_BIN) $(BENCH_BIN) \
     $(SIMCTL_BIN) $(SIMCTL_PLANTED_BIN) $(SIMB_BIN) $(SIMB_PLANTED_ALL)

deps:
	@deploy/deps.sh install

# Quick when everything is present; installs otherwise (root), or stops with
# the apt-get line to run.
deps-check:
	@deploy/deps.sh check 2>/dev/null || deploy/deps.sh install

# The recursive make re-reads pkg-config flags after deps are installed.
test: deps-check
	@$(MAKE) --no-print-directory test-run
	@$(MAKE) --no-print-directory fuzz-run FUZZ_SECONDS=$(TEST_FUZZ_SECONDS)

# Unit tests in parallel; the integration scripts (real clusters) one at a
# time, the C integration tests TEST_INTEGRATION_JOBS at a time.
test-run: $(UNIT_BIN) $(INTEGRATION_BIN) $(BINS) \
          $(SIMCTL_BIN) $(SIMCTL_PLANTED_BIN) $(SIMB_BIN) $(SIMB_PLANTED_ALL)
	tests/layout_check.sh
	$(UNIT_BIN) --jobs=$(TEST_JOBS)
	$(if $(SIMCTL_BIN),SEEDS=$(SIMCTL_TEST_SEEDS) SEED_BASE=1 $(SIMCTL_BIN) | tail -2)
	$(if $(SIMCTL_PLANTED_BIN),set -o pipefail; SEEDS=200 SEED_BASE=1 SIMCTL_EXPECT_CAUGHT=1 $(SIMCTL_PLANTED_BIN) | tail -3)
	$(if $(SIMB_BIN),set -o pipefail; SEEDS=$(SIMB_TEST_SEEDS) SEED_BASE=1 $(SIMB_BIN) | tail -2)
	$(if $(SIMB_BIN),set -e -o pipefail; for s in $(SIMB_PAST_SEEDS); do SEED=$$s $(SIMB_BIN) | tail -2 | head -1; done)
	$(if $(SIMB_PLANTED_BIN),set -o pipefail; SEEDS=1000 SEED_BASE=1 SIMB_EXPECT_CAUGHT=1 $(SIMB_PLANTED_BIN) | tail -3)
	$(if $(SIMB_PLANTED_CRC_BIN),set -o pipefail; SEEDS=$(SIMB_PLANTED_CRC_SEEDS) SEED_BASE=1 SIMB_EXPECT_CAUGHT=1 $(SIMB_PLANTED_CRC_BIN) | tail -3)
	$(if $(SIMB_PLANTED_FSYNC_BIN),set -o pipefail; SEEDS=$(SIMB_PLANTED_FSYNC_SEEDS) SEED_BASE=1 SIMB_EXPECT_CAUGHT=1 $(SIMB_PLANTED_FSYNC_BIN) | tail -3)
	tests/integration/cluster_script.sh $(BUILD)
	tests/integration/kafka_clients.sh $(BUILD)
	tests/integration/kafkajs.sh $(BUILD)
	tests/integration/kafka_python.sh $(BUILD)
	tests/integration/sarama.sh $(BUILD)
	tests/integration/burrow.sh $(BUILD)
	tests/integration/platformatic.sh $(BUILD)
	tests/integration/produce_validation.sh $(BUILD)
	tests/integration/cli_kafka.sh $(BUILD)
	tests/integration/web_page.sh $(BUILD)
	tests/integration/retention.sh $(BUILD)
	tests/integration/live_configs.sh $(BUILD)
	tests/integration/compaction.sh $(BUILD)
	tests/integration/reassign.sh $(BUILD)
	tests/integration/group_handover.sh $(BUILD)
	tests/integration/create_partitions.sh $(BUILD)
	tests/integration/describe_cluster.sh $(BUILD)
	tests/integration/elect.sh $(BUILD)
	tests/integration/readme.sh $(BUILD)
	$(if $(INTEGRATION_BIN),$(INTEGRATION_BIN) --jobs=$(TEST_INTEGRATION_JOBS))
	$(MAKE) --no-print-directory scenarios
	$(MAKE) --no-print-directory jepsen-smoke

# The lessons of deploy/scenarios/, each on a cluster of its own; each
# fails unless it sees the events it narrates. Two run at once, on ports
# far apart (deploy/run-lessons.sh).
scenarios: $(BINS)
	@LESSON_LANES=$(TEST_INTEGRATION_JOBS) deploy/run-lessons.sh $(BUILD)

# The fault-injection harness (jepsen/): its checker's unit tests and
# self-test (planted anomalies must all be found), then one short seeded
# run against a real cluster of this build.
JEPSEN_PY := /usr/bin/python3
DURABLE_LIB := $(BUILD)/libcairn-durable.so
jepsen-smoke: $(BINS) $(DURABLE_LIB)
	CAIRN_DURABLE_LIB=$(DURABLE_LIB) \
	    $(JEPSEN_PY) -m unittest discover -s jepsen/tests -q
	$(JEPSEN_PY) jepsen/selftest.py
	$(JEPSEN_PY) jepsen/run --seed 1 --time 20 --build $(BUILD)

# `make jepsen`: SEEDS seeded runs of TIME seconds of faults each, then the
# three negative controls (which must be caught); one RUN line per run and
# a table.
# SEEDS is shared with `make sim` (2000 there): 3 here unless given.
JEPSEN_SEEDS = $(if $(filter command line environment,$(origin SEEDS)),$(SEEDS),3)
TIME ?= 60
# As root the hosts get their own network namespaces (partition faults).
JEPSEN_NETNS = $(if $(filter 0,$(shell id -u)),--netns)
jepsen: deps-check
	@$(MAKE) --no-print-directory $(BINS) $(DURABLE_LIB)
	@$(JEPSEN_PY) jepsen/campaign --seeds $(JEPSEN_SEEDS) --time $(TIME) \
	    --build $(BUILD) --unsafe-sync-runs 1 --unsafe-fsync-runs 1 \
	    $(JEPSEN_NETNS)

# The power-loss model's recorder, preloaded into brokers by jepsen/run
# (jepsen/powerloss.py explains the model).
$(DURABLE_LIB): jepsen/durable/durable.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(OPT) -fPIC -shared -o $@ $< -ldl

# The simulations (brokers, controllers): SEEDS seeds each from
# SEED_BASE, or SEED=N alone (SIMB_TRACE=1, SIMCTL_TRACE=1 print their
# events).
sim: $(SIMB_BIN) $(SIMCTL_BIN)
	SEED=$(SEED) SEEDS=$(SEEDS) SEED_BASE=$(SEED_BASE) $(SIMB_BIN)
	SEED=$(SEED) SEEDS=$(SEEDS) SEED_BASE=$(SEED_BASE) $(SIMCTL_BIN)

# The tree's rules (tests/layout_check.sh).
layout-check:
	@tests/layout_check.sh

# Criterion forks every test and counts it passed before LeakSanitizer
# reports at the child's exit, so the output is checked for reports too.
asan: deps-check
	@set -o pipefail; LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	$(MAKE) --no-print-directory BUILD=build/asan \
	    OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    test-run 2>&1 | tee build/asan.log
	@! grep -E "ERROR: (Leak|Address)Sanitizer|runtime error:" build/asan.log \
	    || { echo "make asan: sanitizer reports above"; exit 1; }

# Partition counts of the scale benchmark (tests/bench/scale.py): a
# cluster of its own for each, minutes each from 10,000 on.
SCALE_COUNTS ?= 1000 10000

bench: deps-check
	@$(MAKE) --no-print-directory BUILD=build/release OPT="-O2 -g" bench-run

bench-run: $(BENCH_BIN) $(BINS) $(SIMB_BIN) $(SIMCTL_BIN)
	@set -e; for b in $(BENCH_BIN); do echo "== $$b"; $$b; done
	@set -e; for b in $(SIMB_BIN) $(SIMCTL_BIN); do echo "== $$b"; \
	    SEEDS=500 SEED_BASE=1 $$b | tail -1; done
	@echo "== tests/bench/scale.py $(SCALE_COUNTS)"; \
	    /usr/bin/python3 tests/bench/scale.py $(BUILD) $(SCALE_COUNTS)

# libFuzzer, built by clang with ASan + UBSan into build/fuzz/ whatever
# BUILD is, on four targets, each for FUZZ_SECONDS: the Kafka request
# decoders (tests/fuzz/fuzz_kafka_request.c, from the codec sources alone,
# seeded by the codec's own encoders, tests/fuzz/fuzz_corpus.c), the
# checks on Raft messages (tests/fuzz/fuzz_raft_guard.c, which reads every
# message they pass as libraft's decoder does) and the record walker of
# produced batches with its decoders (tests/fuzz/fuzz_record_validate.c,
# checked against an independent record reader), and the metadata a
# controller decodes from Raft entries, snapshots and RPCs
# (tests/fuzz/fuzz_metadata.c). What libFuzzer finds stays
# in build/fuzz/corpus-TARGET, crashing inputs land in
# build/fuzz/artifacts. Any crash, sanitizer report or assertion fails.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
TEST_FUZZ_SECONDS ?= 10   # each target's share of `make test`
FUZZ_DIR := build/fuzz
FUZZ_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
              -fno-sanitize-recover=all
FUZZ_BASE_SRC := common/rc.c common/assert.c
FUZZ_CODEC_SRC := $(wildcard common/kafka/kafka_codec*.c) \
                  common/kafka/kafka_error.c common/arena.c \
                  common/reader.c common/writer.c $(FUZZ_BASE_SRC)
FUZZ_CODEC_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(FUZZ_CODEC_SRC))
FUZZ_RAFT_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,controller/raft_guard.c \
                   $(FUZZ_BASE_SRC))
FUZZ_RECORD_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o, \
                     common/kafka/record_validate.c \
                     common/kafka/record_inflate.c \
                     common/kafka/record_batch.c common/crc32c.c \
                     common/reader.c common/writer.c \
                     tests/lib/batch_builder.c $(FUZZ_BASE_SRC))
FUZZ_RECORD_LDLIBS := $(shell pkg-config --libs libisal zlib liblz4 \
                        libzstd snappy 2>/dev/null)
FUZZ_META_OBJ := $(patsubst %.c,$(FUZZ_DIR)/%.o,common/meta/meta_codec.c \
                   common/meta/meta_apply.c common/meta/meta_image.c \
                   common/meta/meta_index.c \
                   $(PROTO_C) $(FUZZ_BASE_SRC))
FUZZ_BIN := $(FUZZ_DIR)/fuzz_kafka_request
FUZZ_RAFT_BIN := $(FUZZ_DIR)/fuzz_raft_guard
FUZZ_META_BIN := $(FUZZ_DIR)/fuzz_metadata
FUZZ_RECORD_BIN := $(FUZZ_DIR)/fuzz_record_validate
FUZZ_CORPUS_BIN := $(FUZZ_DIR)/fuzz_corpus

fuzz: deps-check
	@$(MAKE) --no-print-directory fuzz-run

# One target: $(1) the binary, $(2) its name, $(3) extra corpus dirs.
define fuzz_one
	@mkdir -p $(FUZZ_DIR)/corpus-$(2)
	@echo "fuzz: $(1) for $(FUZZ_SECONDS) s, log $(FUZZ_DIR)/$(2).log"
	@UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    $(1) -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/ \
	    $(FUZZ_DIR)/corpus-$(2) $(3) >$(FUZZ_DIR)/$(2).log 2>&1; \
	rc=$$?; grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss)' \
	    $(FUZZ_DIR)/$(2).log; \
	if [ $$rc -ne 0 ] || grep -qE 'ERROR: [A-Za-z]+Sanitizer|runtime error:' \
	    $(FUZZ_DIR)/$(2).log; then \
	    tail -n 60 $(FUZZ_DIR)/$(2).log; ls $(FUZZ_DIR)/artifacts; \
	    echo "make fuzz: $(2): crash or sanitizer report (exit $$rc);" \
	        "inputs in $(FUZZ_DIR)/artifacts/"; \
	    exit 1; \
	fi
endef

fuzz-run: $(FUZZ_BIN) $(FUZZ_RAFT_BIN) $(FUZZ_RECORD_BIN) $(FUZZ_META_BIN) \
          $(FUZZ_CORPUS_BIN)
	@rm -rf $(FUZZ_DIR)/seeds $(FUZZ_DIR)/artifacts
	@mkdir -p $(FUZZ_DIR)/seeds $(FUZZ_DIR)/artifacts
	@$(FUZZ_CORPUS_BIN) $(FUZZ_DIR)/seeds
	$(call fuzz_one,$(FUZZ_BIN),kafka_request,$(FUZZ_DIR)/seeds)
	$(call fuzz_one,$(FUZZ_RAFT_BIN),raft_guard,)
	$(call fuzz_one,$(FUZZ_RECORD_BIN),record_validate,)
	$(call fuzz_one,$(FUZZ_META_BIN),metadata,)
	@echo "fuzz: 4 passed, 0 failed"

$(FUZZ_BIN): $(FUZZ_DIR)/tests/fuzz/fuzz_kafka_request.o $(FUZZ_CODEC_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^

$(FUZZ_RAFT_BIN): $(FUZZ_DIR)/tests/fuzz/fuzz_raft_guard.o $(FUZZ_RAFT_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^

$(FUZZ_META_BIN): $(FUZZ_DIR)/tests/fuzz/fuzz_metadata.o $(FUZZ_META_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ \
	    $(shell pkg-config --libs libprotobuf-c 2>/dev/null)

$(FUZZ_DIR)/tests/fuzz/fuzz_metadata.o $(FUZZ_META_OBJ): | $(PROTO_H)

$(FUZZ_RECORD_BIN): $(FUZZ_DIR)/tests/fuzz/fuzz_record_validate.o \
                    $(FUZZ_RECORD_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ \
	    $(FUZZ_RECORD_LDLIBS)

$(FUZZ_CORPUS_BIN): $(FUZZ_DIR)/tests/fuzz/fuzz_corpus.o $(FUZZ_CODEC_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^

# The same warnings as every other build (WARN), under clang.
$(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -I. -I$(GEN) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
	    -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The local three-node cluster (deploy/cluster.sh up) of this BUILD. It
# builds only what the cluster and the README's commands run: the two
# daemons, the cairn CLI and the power-loss recorder jepsen/run preloads
# (`make all` adds the tests, simulations and benchmarks).
cluster: deps-check
	@$(MAKE) --no-print-directory $(BINS) $(DURABLE_LIB)
	CAIRN_BIN=$(abspath $(BUILD)) deploy/cluster.sh up

$(BUILD)/cairn-controller: $(BUILD)/controller/main.o $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/cairn-broker: $(BUILD)/broker/main.o $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/cairn: $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC)) $(LIB)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(CLI_LDLIBS)

$(UNIT_BIN): $(UNIT_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(UNIT_OBJ) $(LIB) $(TEST_LDLIBS) $(LDLIBS)

$(INTEGRATION_BIN): $(INTEGRATION_OBJ) $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(TEST_LDLIBS) $(LDLIBS)

$(SIMCTL_BIN): $(SIMCTL_OBJ) $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SIMCTL_OBJ) $(TESTLIB_OBJ) $(LIB) $(LDLIBS)

$(SIMB_BIN): $(SIMB_OBJ) $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SIMB_OBJ) $(TESTLIB_OBJ) $(LIB) $(LDLIBS)

$(SIMB_PLANTED_BIN): $(SIMB_OBJ) $(TESTLIB_OBJ) $(BUILD)/planted/isr.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SIMB_OBJ) $(TESTLIB_OBJ) $(BUILD)/planted/isr.o \
	    $(LIB) $(LDLIBS)

$(BUILD)/planted/plan_election.c: controller/plan_election.c
	@mkdir -p $(dir $@)
	sed 's/$(PLANTED_ELECT_FROM)/$(PLANTED_ELECT_TO)/' $< > $@
	@! cmp -s $< $@ || { echo "planted bug: plan_election.c lost the line" \
	    "it changes"; rm -f $@; exit 1; }

$(BUILD)/planted/plan_election.o: $(BUILD)/planted/plan_election.c | $(PROTO_H)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(SIMCTL_PLANTED_BIN): $(SIMCTL_OBJ) $(TESTLIB_OBJ) \
                       $(BUILD)/planted/plan_election.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SIMCTL_OBJ) $(TESTLIB_OBJ) \
	    $(BUILD)/planted/plan_election.o $(LIB) $(LDLIBS)

# The copy with the planted bug; the build fails if the line it changes is
# gone from isr.c (the control would test nothing).
$(BUILD)/planted/isr.c: broker/replication/isr.c
	@mkdir -p $(dir $@)
	sed 's/$(PLANTED_HW_FROM)/$(PLANTED_HW_TO)/' $< > $@
	@! cmp -s $< $@ || { echo "planted bug: isr.c lost the line it changes"; \
	    rm -f $@; exit 1; }

$(BUILD)/planted/isr.o: $(BUILD)/planted/isr.c | $(PROTO_H)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/planted/log_verify.c: broker/log/log_verify.c
	@mkdir -p $(dir $@)
	sed 's/$(PLANTED_CRC_FROM)/$(PLANTED_CRC_TO)/' $< > $@
	@! cmp -s $< $@ || { echo "planted bug: log_verify.c lost the line" \
	    "it changes"; rm -f $@; exit 1; }

$(BUILD)/planted/log_sync.c: broker/log/log_sync.c
	@mkdir -p $(dir $@)
	sed 's/$(PLANTED_FSYNC_FROM)/$(PLANTED_FSYNC_TO)/' $< > $@
	@! cmp -s $< $@ || { echo "planted bug: log_sync.c lost the line" \
	    "it changes"; rm -f $@; exit 1; }

$(BUILD)/planted/%.o: $(BUILD)/planted/%.c | $(PROTO_H)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(SIMB_PLANTED_CRC_BIN): $(SIMB_OBJ) $(TESTLIB_OBJ) \
                         $(BUILD)/planted/log_verify.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SIMB_OBJ) $(TESTLIB_OBJ) \
	    $(BUILD)/planted/log_verify.o $(LIB) $(LDLIBS)

$(SIMB_PLANTED_FSYNC_BIN): $(SIMB_OBJ) $(TESTLIB_OBJ) \
                           $(BUILD)/planted/log_sync.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(SIMB_OBJ) $(TESTLIB_OBJ) \
	    $(BUILD)/planted/log_sync.o $(LIB) $(LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(TESTLIB_OBJ) $(LIB) | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(TESTLIB_OBJ) $(LIB) $(LDLIBS)

# Generated protobuf-c code; every object waits for the headers, and make
# keeps them (they are not intermediate files to delete).
.SECONDARY: $(PROTO_C) $(PROTO_H)
$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: proto/%.proto
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -Iproto $<

$(GEN)/%.pb-c.o: $(GEN)/%.pb-c.c | $(PROTO_H)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c | $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The cluster page is assembled into the CLI (.incbin in
# cli/cmd/web/web_page.c).
$(BUILD)/cli/cmd/web/web_page.o: cli/cmd/web/index.html

clean:
	rm -rf build

# The planted copies' too: a header they include changes their layout
# (a stale one wrote into the wrong fields of struct log).
-include $(LIB_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(INTEGRATION_OBJ:.o=.d) \
    $(SIM_OBJ:.o=.d) $(SIMCTL_OBJ:.o=.d) $(SIMB_OBJ:.o=.d) \
    $(wildcard $(BUILD)/planted/*.d) \
    $(patsubst %.c,$(BUILD)/%.d,$(CLI_SRC) controller/main.c broker/main.c) \
    $(FUZZ_CODEC_OBJ:.o=.d) $(FUZZ_DIR)/tests/fuzz/fuzz_kafka_request.d \
    $(FUZZ_DIR)/tests/fuzz/fuzz_corpus.d $(FUZZ_RECORD_OBJ:.o=.d) \
    $(FUZZ_DIR)/tests/fuzz/fuzz_record_validate.d \
    $(FUZZ_RAFT_OBJ:.o=.d) $(FUZZ_DIR)/tests/fuzz/fuzz_raft_guard.d \
    $(FUZZ_META_OBJ:.o=.d) $(FUZZ_DIR)/tests/fuzz/fuzz_metadata.d
