# The sandfleet fleet image, built offline (no registry): the sandbox image's debootstrap root
# (Debian bookworm, python3 with numpy, sympy, scipy, mpmath: sandbox-images/python) plus the
# build machine's Node runtime and bubblewrap (bookworm's glibc, the same as the root's), the
# workspace's node_modules (isolated-vm's native addon included) and the app. Gateway and runner
# are this one image (`sandfleet gateway`, `sandfleet runner`, `sandfleet serve`).
#
# Not built with `docker build .`: deploy/build-fleet-image.sh streams the context (this file at
# deploy/fleet.Dockerfile, node_modules, the app under app/, `node` and `bwrap` at the top).
ARG BASE=sandfleet/python:1
FROM ${BASE}
USER 0:0
COPY node bwrap /usr/local/bin/
WORKDIR /opt/sandfleet
# The dependencies first: a layer that an edit of the sources leaves cached.
COPY node_modules ./node_modules
COPY app ./
# The CLI's bundle (bin/cli-bundle.mjs) made now, so that no start-up builds it; the runtime
# checked against this root's libraries.
RUN node --version && bwrap --version \
 && SANDFLEET_NO_REEXEC=1 node --no-node-snapshot bin/sandfleet.mjs --help >/dev/null && ls .cache/cli >/dev/null
# Nobody by default (the gateway). deploy/fleet.sh runs runners as the container's root with 4
# capabilities, so that a sandbox (nobody, through setpriv and bubblewrap) never shares the
# runner's uid; deploy/README.md says why and what the container is allowed.
USER 65534:65534
ENV NODE_ENV=production HOME=/tmp
EXPOSE 8080 8081
ENTRYPOINT ["node", "--no-node-snapshot", "/opt/sandfleet/bin/sandfleet.mjs"]
# Without API keys (SANDFLEET_API_KEYS or SANDFLEET_API_KEYS_FILE) the gateway refuses a
# non-loopback host: add -e SANDFLEET_ALLOW_UNAUTHENTICATED=true where the port is private.
CMD ["serve", "--host", "0.0.0.0"]
