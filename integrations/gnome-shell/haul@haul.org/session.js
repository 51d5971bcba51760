// Everything the extension runs while it is enabled: the bus client, the button in the top bar and, for tests
// only, the test hook. Created by enable(), destroyed by disable() of either entry point.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';

import {HaulClient} from './haulClient.js';
import {HaulIndicator} from './indicator.js';
import {menuView} from './model.js';
import {TestHook} from './testHook.js';

/** The test hook's switch: tests start gnome-shell with it set to 1 (docs/desktop.md). */
const TEST_HOOK_VARIABLE = 'HAUL_SHELL_TEST_BUS';

/** The name of the application whose desktop-file id is `id` ("Firefox" for org.mozilla.firefox), else null. */
function applicationName(id) {
    try {
        return Gio.DesktopAppInfo.new(`${id}.desktop`)?.get_name() ?? null;
    } catch {
        return null;
    }
}

export class HaulSession {
    constructor(uuid) {
        this._indicator = null;
        this._client = new HaulClient(state => this._indicator?.update(menuView(state, applicationName)));
        this._indicator = new HaulIndicator(this._client);
        this._indicator.update(menuView(this._client.state, applicationName));
        Main.panel.addToStatusArea(uuid, this._indicator);
        this._testHook = GLib.getenv(TEST_HOOK_VARIABLE) === '1' ? new TestHook(this._indicator) : null;
    }

    destroy() {
        this._testHook?.destroy();
        this._testHook = null;
        this._client.destroy();
        this._indicator.destroy();
        this._indicator = null;
    }
}
