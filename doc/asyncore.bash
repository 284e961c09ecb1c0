# bash completion for asyncore(1)
_asyncore()
{
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		report|snapshot|minicore|collect|ingest|query|top|resign|store|serve|runtimes) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	case $prev in
	--format)
		case $cmd in
		query) COMPREPLY=($(compgen -W "table csv json" -- "$cur")) ;;
		top) COMPREPLY=($(compgen -W "table csv json html" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "text json html" -- "$cur")) ;;
		esac
		return ;;
	--threads) COMPREPLY=($(compgen -W "crashing all each" -- "$cur")); return ;;
	--color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
	--recorder-format) COMPREPLY=($(compgen -W "library" -- "$cur")); return ;;
	--sysroot|--debug-dir|--signature-lists|--dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	--keep) COMPREPLY=($(compgen -W "mini full none" -- "$cur")); return ;;
	--db|--binary|--runtime|-o|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--jobs|-j|--limit|--max-frames|--recorder-tail|--timeout|--max-memory|--max-pause|--thread|--max-size|--listen) return ;;
	--pid) COMPREPLY=($(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur")); return ;;
	--journal-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		case $cmd in
		ingest) COMPREPLY=($(compgen -W "--db --jobs --timeout --max-memory --binary --sysroot --debug-dir
			--signature-lists --journal --journal-dir --runtime --sha256 --quiet" -- "$cur")) ;;
		query) COMPREPLY=($(compgen -W "--db --format" -- "$cur")) ;;
		top) COMPREPLY=($(compgen -W "--db --limit --format" -- "$cur")) ;;
		resign) COMPREPLY=($(compgen -W "--db --signature-lists --debug-dir" -- "$cur")) ;;
		store) COMPREPLY=($(compgen -W "--db" -- "$cur")) ;;
		runtimes) COMPREPLY=($(compgen -W "--runtime" -- "$cur")) ;;
		snapshot) COMPREPLY=($(compgen -W "--output --max-pause --thread --sysroot --debug-dir --runtime
			--no-async --no-recorders --no-tasks --no-args" -- "$cur")) ;;
		minicore) COMPREPLY=($(compgen -W "--output --sysroot --debug-dir --runtime --max-frames
			--no-async --no-recorders --no-tasks --no-args --no-locals" -- "$cur")) ;;
		collect) COMPREPLY=($(compgen -W "--db --dir --keep --max-size --timeout --install
			--uninstall" -- "$cur")) ;;
		serve) COMPREPLY=($(compgen -W "--db --listen" -- "$cur")) ;;
		*) COMPREPLY=($(compgen -W "--format --threads --recorder-tail --recorder-format --sysroot
			--debug-dir --max-frames --no-async --no-recorders --no-args --no-tasks --no-source --frame-registers
			--locals --color --signature-lists --runtime --max-memory --timeout --sha256 --pid --max-pause --thread
			--help --version" -- "$cur")) ;;
		esac
		return
	fi
	if [[ -z $cmd && $COMP_CWORD -eq 1 ]]; then
		COMPREPLY=($(compgen -W "report snapshot minicore collect ingest query top resign store serve
			runtimes" -- "$cur")
			$(compgen -f -- "$cur"))
	elif [[ $cmd == store ]]; then
		COMPREPLY=($(compgen -W "init" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _asyncore asyncore
