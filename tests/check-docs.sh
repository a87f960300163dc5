#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check-docs.sh BUILD: the man pages render without a warning (groff -ww,
# mandoc -T lint), carry the tool's version, and name every option the tool
# has; the bash completion parses and completes commands, options, events
# and the COMMAND; the docs' layout and file references match the tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$1
tool=$build/userlib/archpmu
fail=0
bad() { echo "docs: $*"; fail=1; }

version=$("$tool" --version | sed 's/^archpmu version //')
for page in "$build"/man/*.[0-9]; do
	name=$(basename "$page")
	warnings=$(groff -ww -man -Tutf8 "$page" 2>&1 >/dev/null || true)
	[ -z "$warnings" ] || bad "$name: groff: $warnings"
	lint=$(mandoc -T lint -W warning "$page" 2>&1 || true)
	[ -z "$lint" ] || bad "$name: mandoc: $lint"
	grep -q "\"archpmu $version\"" "$page" || bad "$name: not version $version"
done
# Every long option of every command is in its man page (monitor's, who's and regs's:
# archpmu(1)) and in the completion.
for cmd in info list selftest stat record exporter monitor who regs; do
	page=$build/man/archpmu-$cmd.1
	[ -f "$page" ] || page=$build/man/archpmu.1
	for opt in $("$tool" "$cmd" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		[ "$opt" = --help ] && continue
		grep -q -- "$(sed 's/-/\\\\-/g' <<<"$opt")" "$page" || bad "$(basename "$page") lacks $cmd's $opt"
		grep -q -- "$opt" "$top/completion/archpmu.bash" || bad "completion lacks $cmd $opt"
	done
done

bash -n "$top/completion/archpmu.bash" || bad "completion: syntax"
completions=$(bash -c '
	source /usr/share/bash-completion/bash_completion
	source "$1"
	complete_words() {
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		# As bash splits them: ":" and "=" are words of their own, glued in the line.
		COMP_LINE=$(sed "s/ \([:=]\) /\1/g" <<<"${COMP_WORDS[*]}"); COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_archpmu archpmu "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		echo "$* => ${COMPREPLY[*]}"
	}
	complete_words archpmu st
	complete_words archpmu stat --app
	complete_words archpmu stat -e cycles,instr
	complete_words archpmu stat -e cycles sle
	complete_words archpmu --device /dev/archpmu rec
	complete_words archpmu stat -x , sle
	complete_words archpmu stat -e cycles : u sle
' _ "$top/completion/archpmu.bash")
grep -qx "archpmu st => stat" <<<"$completions" || bad "completion of 'archpmu st': $completions"
grep -qx "archpmu stat --app => --append" <<<"$completions" || bad "completion of --app"
grep -qx "archpmu stat -e cycles,instr => cycles,instructions" <<<"$completions" ||
	bad "completion of an event list"
grep -q "^archpmu stat -e cycles sle => .*sleep" <<<"$completions" || bad "completion of the COMMAND"
grep -qx "archpmu --device /dev/archpmu rec => record" <<<"$completions" || bad "completion after --device"
# An option's value is not the COMMAND (-x SEP), and a modifier's ':' does not shift it.
grep -q "^archpmu stat -x , sle => .*sleep" <<<"$completions" || bad "completion after -x SEP"
grep -q "^archpmu stat -e cycles : u sle => .*sleep" <<<"$completions" || bad "completion after cycles:u"
# The docs match the tree: the layer table, every file a comment or document names.
"$top/scripts/check-doc-refs" || bad "the docs name files the tree does not have (above)"
[ "$fail" = 0 ] && echo "docs test passed: $(ls "$build"/man | wc -l) man pages, completion, layout and references"
exit "$fail"
