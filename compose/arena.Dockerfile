# The Arena platform image: built with the official Go image, run from an
# empty base image (the binary is static: SQLite is pure Go). The modules
# are a layer of their own (a change of the sources downloads none again);
# no WORKDIR step: each step on the Go image costs a layer, ~6 s where
# Docker stores layers with fuse-overlayfs (rootless Docker, some CI
# machines).
FROM golang:1.26-trixie AS build
COPY go.mod go.sum /src/
RUN cd /src && go mod download
COPY . /src
RUN cd /src && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/arena ./cmd/arena \
 && mkdir -p /out/data && mkdir -m 1777 /out/tmp

FROM scratch
COPY --from=build /out/arena /arena
COPY --from=build /out/data /data
COPY --from=build /out/tmp /tmp
ENV ARENA_HOST=0.0.0.0 ARENA_PORT=5006 ARENA_DATA=/data
EXPOSE 5006
VOLUME /data
ENTRYPOINT ["/arena"]
CMD ["serve"]
