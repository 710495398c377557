# compactor image, built as a user installs the package: the sources are built and packed, and the
# tarball is installed with the worker's peer dependencies (the LLM SDK, the web server, logging,
# metrics) at the versions of the lockfile. The image runs the built JavaScript; tsx stays a dev tool.
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md LICENSE ./
COPY shared ./shared
COPY worker ./worker
COPY producer ./producer
COPY drizzle ./drizzle
RUN npm pack --pack-destination /tmp \
 && node -e 'const p=require("./package.json"), l=require("./package-lock.json"); console.log(Object.keys(p.peerDependencies).map(n=>n+"@"+l.packages["node_modules/"+n].version).join(" "))' > /tmp/peers

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /tmp/*.tgz /tmp/peers /tmp/
RUN echo '{"name":"compactor-image","private":true}' > package.json \
 && npm install --no-audit --no-fund /tmp/*.tgz $(cat /tmp/peers) \
 && rm /tmp/*.tgz /tmp/peers
USER node
ENTRYPOINT ["node_modules/.bin/compactor"]
CMD ["worker"]
