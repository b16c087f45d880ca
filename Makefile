# Arena's everyday commands. `make help` lists them.

GO_BOTS := tanks-random tanks-hunter snake-greedy snake-random pacman-runner pacman-ghosts

.PHONY: help build bots test test-short bench vet fmt

help:
	@echo "make build       build bin/arena"
	@echo "make bots        build the example bot images (arena/tanks-random, arena/snake-greedy, …)"
	@echo "make test        run the whole test suite (needs the Docker engine)"
	@echo "make test-short  run the tests that need neither Docker nor much time"
	@echo "make bench       print every performance figure of the docs (needs make bots first)"

build:
	CGO_ENABLED=0 go build -trimpath -o bin/arena ./cmd/arena

# The example bots, as docker compose builds them: one go build for all
# six (botkits/go/examples.Dockerfile), a target each.
bots:
	@for b in $(GO_BOTS); do \
		docker build -q -f botkits/go/examples.Dockerfile --target $$b -t arena/$$b botkits/go >/dev/null && echo "built arena/$$b" || exit 1; \
	done

# One package at a time: the timing tests (deadlines under load) must not
# share the two cores with the compose test's image builds.
test:
	go test -p 1 -count=1 -timeout 60m ./...

test-short:
	go test -short ./...

# Every measured figure of the docs, in one run: every package's
# benchmarks (the engine's cost per turn, replays, stdio round trips,
# fairness under load, the judger, workers through NATS, the ladder's
# convergence, the similarity report, the page watching long matches,
# 1,000 viewers, a class of 100 from sign-up to a Swiss final), the
# interleaved round-trip percentiles, their costs and the start times
# (arena doctor), throughput against the bare container lifecycle and
# memory per match (arena bench --baseline).
bench: build
	go test -run '^$$' -bench . -benchmem -timeout 3h ./...
	bin/arena doctor
	@if docker info --format '{{json .Runtimes}}' | grep -q '"runsc"'; then \
		echo "ARENA_RUNTIME=runsc bin/arena doctor"; ARENA_RUNTIME=runsc bin/arena doctor; \
	else echo "gVisor (runsc) is not registered with the engine: no figures under it (see .ci/install-runsc.sh)"; fi
	bin/arena bench --game tanks --bots arena/tanks-random,arena/tanks-hunter --settings '{"zone_radius":0}' --repeats 20 --jobs 2 --baseline

vet:
	go vet ./...
	cd botkits/go && go vet ./...

fmt:
	gofmt -l -w .
