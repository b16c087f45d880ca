# The Go kit's six example bots in one build: one go build compiles them
# all (sharing what they share), and each is a target of its own on an
# empty base image, as the kit's Dockerfile makes one bot:
#
#   docker build -f examples.Dockerfile --target tanks-hunter -t arena/tanks-hunter .
#
# docker compose builds every target from this file: the build stage is
# the same for all six, so it runs once. It is two steps, not the usual
# five (the examples need no module): each step on the Go image costs a
# layer, ~6 s where Docker stores layers with fuse-overlayfs (rootless
# Docker, some CI machines).
FROM golang:1.26-trixie AS build
COPY . /src
RUN cd /src && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/ \
	./tanks-random ./tanks-hunter ./snake-greedy ./snake-random ./pacman-runner ./pacman-ghosts

FROM scratch AS tanks-random
LABEL io.arena.game=tanks
COPY --from=build /out/tanks-random /bot
USER 65534:65534
ENTRYPOINT ["/bot"]

FROM scratch AS tanks-hunter
LABEL io.arena.game=tanks
COPY --from=build /out/tanks-hunter /bot
USER 65534:65534
ENTRYPOINT ["/bot"]

FROM scratch AS snake-greedy
LABEL io.arena.game=snake
COPY --from=build /out/snake-greedy /bot
USER 65534:65534
ENTRYPOINT ["/bot"]

FROM scratch AS snake-random
LABEL io.arena.game=snake
COPY --from=build /out/snake-random /bot
USER 65534:65534
ENTRYPOINT ["/bot"]

FROM scratch AS pacman-runner
LABEL io.arena.game=pacman
COPY --from=build /out/pacman-runner /bot
USER 65534:65534
ENTRYPOINT ["/bot"]

FROM scratch AS pacman-ghosts
LABEL io.arena.game=pacman
COPY --from=build /out/pacman-ghosts /bot
USER 65534:65534
ENTRYPOINT ["/bot"]
