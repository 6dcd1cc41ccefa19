#!/usr/bin/env bash
# The Brokkr CI recipe's one script, called by github-actions.yml and gitlab-ci.yml (copy all
# three into your repository; see README.md here). It talks to the hub only through the `brokkr`
# CLI, with BROKKR_URL and BROKKR_PAK from the CI's variables and secrets.
#
#   brokkr-ci.sh install            build the CLI from BROKKR_CLI_REPO at BROKKR_CLI_REF (skipped when `brokkr` exists)
#   brokkr-ci.sh diff <dir>         preview <dir> on every cluster; writes brokkr-diff.md; fails only on errors
#   brokkr-ci.sh apply <dir>        publish <dir> (signed with BROKKR_SIGNING_KEY when set) and follow the rollout; fails when it is rolled back or fails
#   brokkr-ci.sh gitlab-note <file> post <file> as a merge request note (GITLAB_NOTE_TOKEN: a token with api scope)
set -euo pipefail

CLI_HOME="${BROKKR_CLI_HOME:-$HOME/.brokkr-cli}"
brokkr() {
  if command -v brokkr >/dev/null 2>&1; then command brokkr "$@"; else node "$CLI_HOME/tools/cli/dist/bin.js" "$@"; fi
}

install() {
  if command -v brokkr >/dev/null 2>&1 || [ -f "$CLI_HOME/tools/cli/dist/bin.js" ]; then return 0; fi
  : "${BROKKR_CLI_REPO:?set BROKKR_CLI_REPO to the git URL of Brokkr (TypeScript)}"
  git clone --quiet --depth 1 --branch "${BROKKR_CLI_REF:-main}" "$BROKKR_CLI_REPO" "$CLI_HOME"
  (cd "$CLI_HOME" && npm ci --no-audit --no-fund --loglevel=error && npx tsc -b tools/cli)
  brokkr --version
}

# `brokkr diff` exits 0 (no change), 3 (changes, no errors), 1 (an agent reported an error) or
# 2 (not every agent answered in time). Changes are what a pull request is for: only 1 and 2 fail.
diff() {
  local dir="$1" out code=0
  out="$(brokkr diff -f "$dir" --timeout "${BROKKR_DIFF_TIMEOUT:-5m}" 2>&1)" || code=$?
  printf '%s\n' "$out"
  local verdict
  case "$code" in
    0) verdict='no cluster would change' ;;
    3) verdict='changes on some clusters (no errors)' ;;
    2) verdict='**timed out**: not every agent answered' ;;
    *) verdict='**errors**: an agent could not apply this' ;;
  esac
  {
    printf '### brokkr diff `%s`: %s\n\n' "$dir" "$verdict"
    printf '```\n%s\n```\n' "$out"
  } >brokkr-diff.md
  [ "$code" -eq 0 ] || [ "$code" -eq 3 ]
}

# With BROKKR_SIGNING_KEY (the generator's PEM key, or the path of a file holding it; a CI secret) the content is signed before it is
# posted: agents with a trust policy apply only signed content (docs/signatures.md). BROKKR_SIGNER
# names the generator in the trust root. The key goes to a 0600 file that is removed on exit.
apply() {
  local sign=()
  if [ -n "${BROKKR_SIGNING_KEY:-}" ] && [ -f "$BROKKR_SIGNING_KEY" ]; then
    sign=(--sign "$BROKKR_SIGNING_KEY") # a file variable (GitLab's File type): the path
  elif [ -n "${BROKKR_SIGNING_KEY:-}" ]; then
    SIGNING_KEY_FILE="$(mktemp)"
    trap 'rm -f "$SIGNING_KEY_FILE"' EXIT
    chmod 600 "$SIGNING_KEY_FILE"
    printf '%s\n' "$BROKKR_SIGNING_KEY" >"$SIGNING_KEY_FILE"
    sign=(--sign "$SIGNING_KEY_FILE")
  fi
  brokkr apply -f "$1" "${sign[@]}" --wait --timeout "${BROKKR_WAIT_TIMEOUT:-15m}"
}

gitlab_note() {
  : "${GITLAB_NOTE_TOKEN:?set GITLAB_NOTE_TOKEN (a project access token with api scope) to post the summary}"
  node -e 'process.stdout.write(JSON.stringify({ body: require("fs").readFileSync(process.argv[1], "utf8") }))' "$1" |
    curl --fail --silent --show-error -X POST -H "PRIVATE-TOKEN: $GITLAB_NOTE_TOKEN" -H 'Content-Type: application/json' \
      --data-binary @- "$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes" >/dev/null
}

case "${1:-}" in
  install) install ;;
  diff) diff "${2:?usage: brokkr-ci.sh diff <dir>}" ;;
  apply) apply "${2:?usage: brokkr-ci.sh apply <dir>}" ;;
  gitlab-note) gitlab_note "${2:?usage: brokkr-ci.sh gitlab-note <file>}" ;;
  *)
    echo "usage: brokkr-ci.sh install | diff <dir> | apply <dir> | gitlab-note <file>" >&2
    exit 64
    ;;
esac
