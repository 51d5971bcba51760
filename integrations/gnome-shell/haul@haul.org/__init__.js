// GNOME Shell 43 and 44 load an extension with gjs's legacy importer, which looks for a symbol in a folder's
// __init__.js before it reads a file of that name: `extension` here stands in for extension.js, the ES module that
// GNOME Shell 45 and later load. It runs the legacy form of the same files, which integrations/gnome-shell/
// assemble.sh generates into legacy/.
'use strict';

/* exported extension */
var extension = {
    init(meta) {
        const Me = imports.misc.extensionUtils.getCurrentExtension();
        let session = null;
        return {
            enable() {
                session = new Me.imports.legacy.session.HaulSession(meta.uuid);
            },
            disable() {
                session.destroy();
                session = null;
            },
        };
    },
};
