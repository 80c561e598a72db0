#!/bin/sh
# Memory Portal's container entry point (README.md, Running in production).
#   serve            (default) gunicorn with deploy/gunicorn.conf.py; extra arguments go to gunicorn
#   migrate          apply database migrations; run once per release, before the new pods serve
#   wait-for-migrations [SECONDS]
#                    wait (default 600 s) until no migration is left to apply (an init container)
#   clearsessions    delete expired sessions and submission claims, and past their retention
#                    hashes of deleted memory, earlier versions and jobs' progress rows
#                    (daily: a CronJob or a Container Apps job; manage.py purge_expired)
#   check            Django's deployment checks; fails on any warning
#   manage ARGS...   any other manage.py command
set -eu
cd "$(dirname "$0")/.."
command=${1:-serve}
[ $# -gt 0 ] && shift
case "$command" in
  serve) exec gunicorn -c deploy/gunicorn.conf.py "$@" ;;
  migrate) exec python manage.py migrate --noinput ;;
  wait-for-migrations)
    deadline=$(($(date +%s) + ${1:-600}))
    until python manage.py migrate --check >/dev/null; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        echo '{"level": "CRITICAL", "logger": "entrypoint", "message": "Migrations not applied in time: is the migration Job failing?"}' >&2
        exit 1
      fi
      sleep 2
    done
    ;;
  clearsessions) exec python manage.py purge_expired ;;
  check) exec python manage.py check --deploy --fail-level WARNING ;;
  manage) exec python manage.py "$@" ;;
  *)
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
