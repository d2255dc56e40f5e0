#!/usr/bin/env bash
# Prints every PromQL expression of a Grafana dashboard JSON, one per line, with Grafana's
# variables replaced by concrete values so Prometheus can run them:
#   dashboard_queries.sh dashboard.json [level]
# $__rate_interval, $__interval and $__range become ${PHALANX_RATE_WINDOW:-5m}; $cluster_queue
# becomes .* (the dashboard's "All"); $level becomes the second argument (default
# topology.k8s.aws/network-node-layer-3); ${datasource} is not part of any expression.
set -euo pipefail
dashboard=$1 level=${2:-topology.k8s.aws/network-node-layer-3} window=${PHALANX_RATE_WINDOW:-5m}
jq -r '[.panels[] | (., .panels[]?) | .targets[]? | .expr | select(. != null)] | .[]' "$dashboard" |
  sed -e "s/\\\$__rate_interval/$window/g" -e "s/\\\$__interval/$window/g" -e "s/\\\$__range/$window/g" \
      -e 's/\$cluster_queue/.*/g' -e "s|\\\$level|$level|g"
