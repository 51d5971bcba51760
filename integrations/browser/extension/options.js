// The options page: the three settings of policy.js, saved in storage.local as soon as they change.
import { settingsFrom } from './policy.js';

const api = globalThis.browser ?? globalThis.chrome;
const megabyte = 1000 * 1000;
const enabled = document.getElementById('enabled');
const minimumSize = document.getElementById('minimumSize');
const privateWindows = document.getElementById('privateWindows');

async function load() {
    const settings = settingsFrom(await api.storage.local.get(null));
    enabled.checked = settings.enabled;
    minimumSize.value = String(settings.minimumSize / megabyte);
    privateWindows.checked = settings.privateWindows;
}

async function save() {
    const megabytes = Number(minimumSize.value);
    await api.storage.local.set(settingsFrom({
        enabled: enabled.checked,
        minimumSize: Number.isFinite(megabytes) && megabytes > 0 ? Math.round(megabytes * megabyte) : 0,
        privateWindows: privateWindows.checked,
    }));
}

for (const input of [enabled, minimumSize, privateWindows]) input.addEventListener('change', save);
load();
