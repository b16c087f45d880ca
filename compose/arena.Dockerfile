# The Arena platform image: built with the official Go image, run from an
# empty base image (the binary is static: SQLite is pure Go).
FROM golang:1.26-trixie AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/arena ./cmd/arena \
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
