/**
 * The completion scripts `yiem completion bash|zsh|fish` prints. Each passes the words up to the
 * cursor to `yiem __complete` (./complete.ts) and turns its answer into the shell's own
 * candidates: words as given, or file and folder names completed by the shell itself (after a
 * prefix such as `@`). They call `yiem` from PATH, so yiem must be installed there.
 */
import type { Shell } from "./words.js";

const BASH = `# yiem completion for bash: source it from ~/.bashrc (yiem completion bash >> ~/.bashrc)
_yiem_completion() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" word lines kind prefix part n item
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  # bash splits --flag=value at "=": rebuild the whole word; only its last part gets replaced.
  if [[ "$cur" == "=" ]]; then word="$prev="; cur=""
  elif [[ "$prev" == "=" ]] && (( COMP_CWORD > 1 )); then word="\${COMP_WORDS[COMP_CWORD-2]}=$cur"
  else word="$cur"; fi
  n=$(( \${#word} - \${#cur} ))
  mapfile -t lines < <(yiem __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  COMPREPLY=()
  kind="\${lines[0]%%:*}"; prefix="\${lines[0]#*:}"
  case "$kind" in
    words)
      for item in "\${lines[@]:1}"; do COMPREPLY+=("\${item:n}"); done ;;
    file|dir)
      part="\${word:\${#prefix}}"
      if (( \${#prefix} <= n )); then
        compopt -o filenames 2>/dev/null
        if [[ "$kind" == dir ]]; then mapfile -t COMPREPLY < <(compgen -d -- "$part")
        else mapfile -t COMPREPLY < <(compgen -f -- "$part"); fi
      else
        mapfile -t lines < <(if [[ "$kind" == dir ]]; then compgen -d -- "$part"; else compgen -f -- "$part"; fi)
        for item in "\${lines[@]}"; do
          [[ -d "$item" ]] && item="$item/"
          item="$prefix$item"; COMPREPLY+=("\${item:n}")
        done
        [[ "\${#COMPREPLY[@]}" == 1 && "\${COMPREPLY[0]}" == */ ]] && compopt -o nospace 2>/dev/null
      fi ;;
  esac
  return 0
}
complete -F _yiem_completion yiem
`;

const ZSH = `#compdef yiem
# yiem completion for zsh: source it from ~/.zshrc after compinit (yiem completion zsh >> ~/.zshrc),
# or save it as _yiem in a folder of $fpath.
_yiem() {
  local -a lines candidates
  local kind prefix
  lines=("\${(@f)$(yiem __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  kind="\${lines[1]%%:*}"; prefix="\${lines[1]#*:}"
  case "$kind" in
    words)
      candidates=("\${(@)lines[2,-1]}")
      (( \${#candidates} )) && compadd -Q -S '' -- "\${(@)candidates}" ;;
    file|dir)
      [[ -n "$prefix" ]] && compset -P "\${(b)prefix}"
      if [[ "$kind" == dir ]]; then _files -/; else _files; fi ;;
  esac
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _yiem "$@"
else
  compdef _yiem yiem
fi
`;

const FISH = `# yiem completion for fish: yiem completion fish > ~/.config/fish/completions/yiem.fish
function __yiem_complete
    set -l words (commandline -opc) (commandline -ct)
    set -e words[1]
    set -l lines (yiem __complete $words 2>/dev/null)
    test (count $lines) -gt 0; or return
    set -l head (string split -m 1 : -- $lines[1])
    set -e lines[1]
    switch $head[1]
        case words
            printf '%s\\n' $lines
        case file dir
            set -l prefix $head[2]
            set -l part (string sub -s (math (string length -- "$prefix") + 1) -- (commandline -ct))
            if test $head[1] = dir
                for path in (__fish_complete_directories "$part")
                    printf '%s%s\\n' "$prefix" "$path"
                end
            else
                for path in (__fish_complete_path "$part")
                    printf '%s%s\\n' "$prefix" "$path"
                end
            end
    end
end
complete -c yiem -f -a '(__yiem_complete)'
`;

export function completionScript(shell: Shell): string {
  return shell === "zsh" ? ZSH : shell === "fish" ? FISH : BASH;
}
