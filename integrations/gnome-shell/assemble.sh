#!/usr/bin/env bash
# Assembles the GNOME Shell extension haul@haul.org into DEST, one folder for GNOME Shell 43 to 50:
#
#   integrations/gnome-shell/assemble.sh DEST
#
# The source (haul@haul.org/) is ES modules, the form GNOME Shell 45 and later load from extension.js. GNOME Shell
# 43 and 44 load __init__.js's `extension` instead (see that file), which runs legacy/: each module again, as a
# script of gjs's legacy importer. This script writes legacy/ by rewriting the import and export lines, the only
# lines where the two forms differ:
#
#   import X from 'gi://X';                                  const X = imports.gi.X;
#   import * as M from '$shell/ui/m.js';   const M = imports.ui.m;
#   import {A, B} from './m.js';                             const {A, B} = <this extension>.imports.legacy.m;
#   export const / export function / export class C          var / function / var C = class C
#
# Any other import or export line fails the assembly, so that a new form cannot slip through unconverted.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source=$here/haul@haul.org
dest=${1:?usage: assemble.sh DEST}

mkdir -p "$dest/legacy"
install -m 644 "$source"/metadata.json "$source"/*.js "$dest/"
own="imports.misc.extensionUtils.getCurrentExtension().imports.legacy"
for module in "$source"/*.js; do
    name=$(basename "$module")
    case $name in
        extension.js | __init__.js) continue ;;
    esac
    shell="resource:///org/gnome/shell"
    sed -E \
        -e "s#^import ([A-Za-z]+) from 'gi://([A-Za-z]+)';\$#const \\1 = imports.gi.\\2;#" \
        -e "s#^import \\* as ([A-Za-z]+) from '$shell/([a-z]+)/([A-Za-z]+)\\.js';\$#const \\1 = imports.\\2.\\3;#" \
        -e "s#^import \\{([A-Za-z, ]+)\\} from '$shell/([a-z]+)/([A-Za-z]+)\\.js';\$#const {\\1} = imports.\\2.\\3;#" \
        -e "s#^import \\* as ([A-Za-z]+) from '\\./([A-Za-z]+)\\.js';\$#const \\1 = $own.\\2;#" \
        -e "s#^import \\{([A-Za-z, ]+)\\} from '\\./([A-Za-z]+)\\.js';\$#const {\\1} = $own.\\2;#" \
        -e "s#^export (const|let) #var #" \
        -e "s#^export function #function #" \
        -e "s#^export class ([A-Za-z]+)#var \\1 = class \\1#" \
        "$module" >"$dest/legacy/$name"
    if left=$(grep -nE '^(import|export)[^a-zA-Z]' "$dest/legacy/$name"); then
        printf 'assemble.sh: %s: a line the legacy form cannot take:\n%s\n' "$name" "$left" >&2
        exit 1
    fi
    chmod 644 "$dest/legacy/$name"
done
