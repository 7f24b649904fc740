#!/usr/bin/env bash
# A sandfleet fleet of separate hosts, as containers on one Docker engine: a user-defined network,
# runners behind one DNS alias (what a Kubernetes headless Service gives), gateways that find them
# with --runners-dns and re-resolve it, and a shared secret between the two.
#
#   deploy/fleet.sh up [RUNNERS [GATEWAYS]]   # default 3 runners, 1 gateway; prints the gateways' URLs
#   deploy/fleet.sh add-runner                # one more runner behind the alias
#   deploy/fleet.sh urls                      # the gateways' URLs (published on 127.0.0.1)
#   deploy/fleet.sh down                      # removes this fleet's containers and network
#
# Settings (environment):
#   SANDFLEET_FLEET_NAME     prefix of every container and of the network (default sandfleet)
#   SANDFLEET_FLEET_IMAGE    the image (default sandfleet/sandfleet:VERSION, deploy/fleet-image.sh: the
#                            chart's; built by build-fleet-image.sh unless SANDFLEET_FLEET_BUILD=0)
#   SANDFLEET_GATEWAY_PORT   the first gateway's port on 127.0.0.1 (each further gateway the next
#                            one up); default: a free port the engine picks (`urls` prints them)
#   SANDFLEET_RUNNER_SECRET  the fleet's shared secret; without one, a random one is made once and
#                            kept in $SANDFLEET_FLEET_STATE/NAME.secret (mode 600)
#   SANDFLEET_FLEET_STATE    (default ${XDG_STATE_HOME:-$HOME/.local/state}/sandfleet)
#   SANDFLEET_RUNNER_ARGS    extra flags of `sandfleet runner` (default --pool-size 2)
#   SANDFLEET_GATEWAY_ARGS   extra flags of `sandfleet gateway`
#   SANDFLEET_RUNNER_DOCKER_ARGS, SANDFLEET_GATEWAY_DOCKER_ARGS  extra `docker run` options
#                            (default for runners: --memory 2g)
#
# The gateways publish their port on 127.0.0.1 only, so they serve without API keys
# (--allow-unauthenticated); for keys, pass them in SANDFLEET_GATEWAY_DOCKER_ARGS, e.g.
# `-v /path/keys:/run/sandfleet/api-keys:ro -e SANDFLEET_API_KEYS_FILE=/run/sandfleet/api-keys`
# (a file the container's uid 65534 can read; docs/SECURITY.md has its format).
#
# The runners use the process backend (bubblewrap) inside their containers, which needs the
# container's seccomp profile and masked /proc paths lifted; the runner runs as the container's
# root with 5 of Docker's default capabilities (it starts each sandbox as nobody): see
# deploy/README.md for what that means and the alternative.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
name="${SANDFLEET_FLEET_NAME:-sandfleet}"
image="$(bash "$root/deploy/fleet-image.sh")"
gateway_port="${SANDFLEET_GATEWAY_PORT:-}"
[[ -z "$gateway_port" || "$gateway_port" =~ ^[0-9]+$ ]] || { echo "fleet: SANDFLEET_GATEWAY_PORT must be a port number" >&2; exit 1; }
network="$name-net"
alias=runners
label="org.sandfleet.fleet=$name"

die() { echo "fleet: $*" >&2; exit 1; }

secret() {
  if [[ -n "${SANDFLEET_RUNNER_SECRET:-}" ]]; then echo "$SANDFLEET_RUNNER_SECRET"; return; fi
  local dir="${SANDFLEET_FLEET_STATE:-${XDG_STATE_HOME:-$HOME/.local/state}/sandfleet}"
  local file="$dir/$name.secret"
  if [[ ! -s "$file" ]]; then
    mkdir -p "$dir"
    (umask 077; head -c 32 /dev/urandom | base64 | tr -d '/+=\n' > "$file")
  fi
  cat "$file"
}

# The next index of a role, one past the highest in use: NAME-runner-1, NAME-runner-2, … (a name
# is not reused while the fleet has a higher one, so a replacement never takes a removed runner's name)
next_index() {
  local role="$1" n max=0
  for n in $(docker ps -a --filter "label=$label" --format '{{.Names}}'); do
    [[ "$n" =~ ^$name-$role-([0-9]+)$ ]] && (( BASH_REMATCH[1] > max )) && max="${BASH_REMATCH[1]}"
  done
  echo $((max + 1))
}

# A runner's container name is its hostname and its runner id (what results, /readyz and the logs
# name), never the container's hash; its sandboxes have a hostname of their own (`sandbox`).
run_runner() {
  local i; i="$(next_index runner)"
  # shellcheck disable=SC2086
  docker run -d --init --name "$name-runner-$i" --hostname "$name-runner-$i" --label "$label" \
    --network "$network" --network-alias "$alias" \
    --user 0:0 --cap-drop ALL --cap-add SETUID --cap-add SETGID --cap-add KILL --cap-add CHOWN --cap-add DAC_OVERRIDE \
    --read-only --tmpfs /tmp:rw,exec,size=512m --security-opt no-new-privileges \
    --security-opt seccomp=unconfined --security-opt systempaths=unconfined --security-opt apparmor=unconfined \
    --stop-timeout 40 ${SANDFLEET_RUNNER_DOCKER_ARGS:---memory 2g} \
    -e SANDFLEET_RUNNER_SECRET="$(secret)" \
    "$image" runner --id "$name-runner-$i" --host 0.0.0.0 --port 8081 --backend process ${SANDFLEET_RUNNER_ARGS:---pool-size 2} >/dev/null
  echo "$name-runner-$i"
}

run_gateway() {
  local i port=""; i="$(next_index gateway)"
  [[ -z "$gateway_port" ]] || port=$((gateway_port + i - 1))
  # shellcheck disable=SC2086
  docker run -d --init --name "$name-gateway-$i" --hostname "$name-gateway-$i" --label "$label" \
    --network "$network" -p "127.0.0.1:$port:8080" \
    --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
    ${SANDFLEET_GATEWAY_DOCKER_ARGS:-} \
    -e SANDFLEET_RUNNER_SECRET="$(secret)" \
    "$image" gateway --host 0.0.0.0 --port 8080 --allow-unauthenticated --runners-dns "$alias:8081" --dns-refresh-ms 2000 ${SANDFLEET_GATEWAY_ARGS:-} >/dev/null
  echo "$name-gateway-$i"
}

urls() {
  local c
  for c in $(docker ps --filter "label=$label" --filter "name=^$name-gateway-" --format '{{.Names}}' | sort); do
    echo "http://$(docker port "$c" 8080/tcp | head -n1)"
  done
}

case "${1:-}" in
  up)
    runners="${2:-3}"; gateways="${3:-1}"
    if [[ "${SANDFLEET_FLEET_BUILD:-1}" != 0 ]]; then SANDFLEET_FLEET_IMAGE="$image" bash "$root/deploy/build-fleet-image.sh"; fi
    docker network inspect "$network" >/dev/null 2>&1 || docker network create --label "$label" "$network" >/dev/null
    for _ in $(seq 1 "$runners"); do run_runner; done
    for _ in $(seq 1 "$gateways"); do run_gateway; done
    urls
    ;;
  add-runner) run_runner ;;
  add-gateway) run_gateway ;;
  urls) urls ;;
  down)
    ids="$(docker ps -aq --filter "label=$label")"
    [[ -z "$ids" ]] || docker rm -f $ids >/dev/null
    docker network rm "$network" >/dev/null 2>&1 || true
    ;;
  *) die "usage: deploy/fleet.sh up [RUNNERS [GATEWAYS]] | add-runner | add-gateway | urls | down" ;;
esac
