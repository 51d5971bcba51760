// GNOME Shell 45 and later load the extension as ES modules, from this file. GNOME Shell 43 and 44 load the legacy
// form, which integrations/gnome-shell/assemble.sh generates from the same files (see its comments).

import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

import {HaulSession} from './session.js';

export default class HaulExtension extends Extension {
    enable() {
        this._session = new HaulSession(this.uuid);
    }

    disable() {
        this._session.destroy();
        this._session = null;
    }
}
