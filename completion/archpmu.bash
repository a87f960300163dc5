# SPDX-License-Identifier: MIT
# bash completion for archpmu: commands, options, event names, and (as for
# perf) the COMMAND stat and record run, completed as a command of its own.

_archpmu_events="cycles cpu-cycles instructions ref-cycles bus-cycles cache-references
cache-misses branches branch-instructions branch-misses slots topdown-slots topdown-be-bound
topdown-bad-spec topdown-fe-bound topdown-retiring lbr-inserts L1-dcache-loads L1-dcache-load-misses
LLC-loads LLC-load-misses L1-icache-loads L1-icache-load-misses dTLB-loads dTLB-load-misses
iTLB-loads iTLB-load-misses L1-dcache-prefetches L1-dcache-prefetch-misses"

# The model-specific names of this CPU, from `archpmu list` (libpfm4), once per shell.
_archpmu_model_events()
{
	if [[ -z ${_archpmu_model_event_names+set} ]]; then
		_archpmu_model_event_names=$("${1:-archpmu}" list 2>/dev/null |
			sed -n 's/^  \([A-Z][A-Z0-9_.:]*\) .*/\1/p')
	fi
	printf '%s\n' "$_archpmu_model_event_names"
}

# The COMP_WORDS index of words[$1]: _init_completion -n =: joins the words bash
# split at ':' and '=' (cycles:u, --duration=5), _command_offset counts COMP_WORDS.
_archpmu_comp_index()
{
	local k j=0 joined
	for ((k = 0; k < $1; k++)); do
		joined=""
		while [[ $joined != "${words[k]}" ]] && ((j < ${#COMP_WORDS[@]})); do
			joined+=${COMP_WORDS[j]}
			((j++))
		done
	done
	echo "$j"
}

_archpmu()
{
	local cur prev words cword
	_init_completion -n =: || return

	local cmds="info list stat record monitor who regs selftest exporter"
	local cmd="" i start=0
	for ((i = 1; i < cword; i++)); do
		case "${words[i]}" in
		--device) ((i++)) ;;
		-*) ;;
		*)
			cmd=${words[i]}
			start=$((i + 1))
			break
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		case "$prev" in
		--device)
			_filedir
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--device --version -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		fi
		return
	fi

	local opts with_value=""
	case "$cmd" in
	info | list | monitor | who) opts="-j --json -h --help" ;;
	regs)
		opts="-C --cpu -j --json -h --help"
		with_value="-C --cpu"
		;;
	selftest)
		opts="-C --cpu -h --help"
		with_value="-C --cpu"
		;;
	exporter)
		opts="--listen -e --event -C --cpu -h --help"
		with_value="--listen -e --event -C --cpu"
		;;
	stat)
		opts="-e --event -a --all-cpus -C --cpu -p --pid -t --tid -A --per-cpu
			-I --interval-print -x --field-separator -j --json-output --json -o --output
			--append -r --repeat --duration --topdown --td-level -M --metrics -d --detailed --device
			-h --help"
		with_value="-e --event -C --cpu -p --pid -t --tid -I --interval-print
			-x --field-separator -o --output -r --repeat --duration --td-level -M --metrics
			--device"
		;;
	record)
		opts="-e --event -c --count -F --freq -a --all-cpus -C --cpu -p --pid -t --tid
			-o --output -g --call-graph -m --mmap-pages --sample-read --duration --device
			-h --help"
		with_value="-e --event -c --count -F --freq -C --cpu -p --pid -t --tid -o --output
			--call-graph -m --mmap-pages --duration --device"
		;;
	*) return ;;
	esac

	# stat and record: the first word that is neither an option nor an
	# option's value starts the COMMAND.
	if [[ $cmd == stat || $cmd == record ]]; then
		for ((i = start; i < cword; i++)); do
			if [[ ${words[i]} == -- ]]; then
				_command_offset "$(_archpmu_comp_index $((i + 1)))"
				return
			fi
			if [[ " ${with_value//[$'\n\t']/ } " == *" ${words[i]} "* ]]; then
				((i++))
				continue
			fi
			if [[ ${words[i]} != -* ]]; then
				_command_offset "$(_archpmu_comp_index $i)"
				return
			fi
		done
	fi

	case "$prev" in
	-e | --event)
		local prefix=""
		[[ $cur == *,* ]] && prefix=${cur%,*},
		COMPREPLY=($(compgen -P "$prefix" -W "$_archpmu_events $(_archpmu_model_events "${words[0]}")" -- "${cur##*,}"))
		compopt -o nospace
		return
		;;
	-o | --output | --device)
		_filedir
		return
		;;
	-p | --pid)
		_pids
		return
		;;
	-C | --cpu | -t | --tid | -I | --interval-print | -x | --field-separator | -r | --repeat | \
		--duration | -c | --count | -F | --freq | -m | --mmap-pages | --listen)
		return
		;;
	esac

	if [[ $cur == -* || $cmd != stat && $cmd != record ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
}
complete -F _archpmu archpmu
