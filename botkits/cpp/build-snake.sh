#!/bin/sh
# Build a Snake bot's image from one algorithm file (see playerbase.h):
#
#   ./build-snake.sh my_algo.c my_name/snake
#   ./build-snake.sh examples/greedy.c my_name/snake-greedy
#
# It runs, in this folder:
#   docker build -f Dockerfile.snake --build-arg ALGO=<algorithm> -t <image> .
# Extra arguments go to docker build (e.g. --no-cache).
set -eu
if [ $# -lt 2 ]; then
  echo "usage: $0 ALGORITHM.c IMAGE [docker build options...]" >&2
  exit 2
fi
algo=$1
image=$2
shift 2
cd "$(dirname "$0")"
if [ ! -f "$algo" ]; then
  echo "$0: $algo: no such file (give a path inside $(pwd))" >&2
  exit 2
fi
exec docker build -f Dockerfile.snake --build-arg ALGO="$algo" -t "$image" "$@" .
