#!/bin/bash
# ranges-sample.sh: ranges.bats again, on the sample backend
# (--range-backend sample), so that both backends pass the same tests.
exec env PG_RANGE_BACKEND=sample bats --tap "$(dirname "$0")/ranges.bats"
