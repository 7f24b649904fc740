# The sandfleet fleet image: gateway and runner (`sandfleet gateway`, `sandfleet runner`,
# `sandfleet serve`), with bubblewrap and the same Python packages as the sandbox image, for the
# Helm chart in helm/sandfleet. Needs a machine that can pull base images; the runner's
# `process` backend needs user namespaces in its pod (the chart's runner.securityContext).
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap util-linux python3 python3-numpy python3-sympy python3-scipy python3-mpmath \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/sandfleet
COPY package.json package-lock.json ./
COPY packages ./packages
COPY services ./services
COPY cli ./cli
COPY benchmarks/package.json ./benchmarks/package.json
COPY bin ./bin
COPY sandbox-images/python/executor.py sandbox-images/python/session_host.py ./sandbox-images/python/
RUN npm ci --no-audit --no-fund && npm cache clean --force
# The CLI's bundle (bin/cli-bundle.mjs), made now so that no start-up builds it.
RUN node --no-node-snapshot bin/sandfleet.mjs --help >/dev/null && ls .cache/cli
ENV NODE_ENV=production
# The commit in sandfleet_build_info (docker build --build-arg SANDFLEET_COMMIT=$(git rev-parse HEAD)).
ARG SANDFLEET_COMMIT=""
ENV SANDFLEET_COMMIT=$SANDFLEET_COMMIT
EXPOSE 8080 8081
ENTRYPOINT ["node", "/opt/sandfleet/bin/sandfleet.mjs"]
CMD ["serve", "--host", "0.0.0.0"]
