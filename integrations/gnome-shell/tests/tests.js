// Tests of the GNOME Shell extension that need no shell: what the menu shows for a state of hauld (model.js), that
// the names it uses are the contract's (dbus/org.haul.Haul1.xml), and that the ES-module form (GNOME Shell 45 and
// later) loads, enables and disables against stubs of the shell's modules (stubs/).
//
//   gjs -m integrations/gnome-shell/tests/tests.js      (with a session bus: the extension's client watches it)
//
// Prints one line per test and "# N passed, M failed"; exits with 1 when a test failed. HostTests run it.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import System from 'system';

import * as Contract from '../haul@haul.org/contract.js';
import {
    formatBytes, formatLimit, formatRate, menuView, progressText, stateText, taskName, taskRow, waitingSentence,
} from '../haul@haul.org/model.js';

const here = GLib.path_get_dirname(Gio.File.new_for_uri(import.meta.url).get_path());
const extensionSource = GLib.build_filenamev([here, '..', 'haul@haul.org']);
const contractDocument = GLib.build_filenamev([here, '..', '..', '..', 'dbus', 'org.haul.Haul1.xml']);

const tests = [];
function test(name, body) {
    tests.push({name, body});
}

function equal(actual, expected, what = '') {
    const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
    if (a !== e)
        throw new Error(`${what ? `${what}: ` : ''}expected ${e}, got ${a}`);
}

function check(condition, what) {
    if (!condition)
        throw new Error(what);
}

function readText(path) {
    const [, bytes] = GLib.file_get_contents(path);
    return new TextDecoder().decode(bytes);
}

const ERROR = 'org.haul.Haul1.Error';

/** A running download of debian.iso with everything a task has; `changes` override. */
function task(changes = {}) {
    return {
        Id: 1, Kind: 'download', URL: 'https://example.org/debian.iso', Path: '/home/u/Downloads/debian.iso',
        State: 'running', BytesReceived: 5 * 1048576, BytesExpectedToReceive: 20 * 1048576, BytesSent: 0,
        BytesExpectedToSend: 0, Rate: 1572864, Pausable: true, Cancellable: true, ErrorName: '', ErrorMessage: '',
        WaitingFor: '', ...changes,
    };
}

// MARK: Formatting

test('sizes and rates are in binary units with one decimal, as haul prints them', () => {
    equal(formatBytes(0), '0 B');
    equal(formatBytes(1023), '1023 B');
    equal(formatBytes(1536), '1.5 KiB');
    equal(formatBytes(5 * 1048576), '5.0 MiB');
    equal(formatBytes(3 * 1073741824), '3.0 GiB');
    equal(formatRate(1572864), '1.5 MiB/s');
    equal(formatBytes(-5), '0 B');
});

test('a limit reads "None", whole MiB/s, or a rate', () => {
    equal(formatLimit(0), 'None');
    equal(formatLimit(1048576), '1 MiB/s');
    equal(formatLimit(10 * 1048576), '10 MiB/s');
    equal(formatLimit(512 * 1024), '512.0 KiB/s');
});

// MARK: A task's row

test('a task is named after its file, else its URL, else its number', () => {
    equal(taskName(task()), 'debian.iso');
    equal(taskName(task({Path: '/home/u/Downloads/', URL: 'https://h/a/r%C3%A9sum%C3%A9.pdf?x=1'})), 'résumé.pdf');
    equal(taskName(task({Path: '', URL: 'https://h/%E0%A4%A'})), '%E0%A4%A');
    equal(taskName(task({Path: '', URL: 'https://example.org/', Id: 7})), 'Transfer 7');
});

test('progress reads as a percentage of the size, or the bytes alone while the size is unknown', () => {
    equal(progressText(task()), '25 % of 20.0 MiB');
    equal(progressText(task({BytesExpectedToReceive: -1})), '5.0 MiB');
    const upload = task({Kind: 'upload', BytesReceived: 0, BytesExpectedToReceive: -1, BytesSent: 3 * 1048576,
        BytesExpectedToSend: 4 * 1048576});
    equal(progressText(upload), '75 % of 4.0 MiB');
    equal(taskRow(task({BytesExpectedToReceive: -1})).progress, null);
    equal(taskRow(task()).progress, 0.25);
});

test('the state reads as the rate, why the task waits, or how it ended', () => {
    equal(stateText(task()), '1.5 MiB/s');
    equal(stateText(task({Rate: 0})), 'Starting');
    equal(stateText(task({State: 'suspended'})), 'Suspended');
    equal(stateText(task({State: 'suspended', ErrorMessage: 'it crashed hauld twice'})),
        'Suspended: it crashed hauld twice');
    equal(stateText(task({State: 'canceling'})), 'Cancelling');
    equal(stateText(task({State: 'completed'})), 'Finished');
    equal(stateText(task({State: 'completed', ErrorName: `${ERROR}.Cancelled`, ErrorMessage: 'cancelled'})),
        'Cancelled');
    equal(stateText(task({State: 'completed', ErrorName: `${ERROR}.HTTP`, ErrorMessage: 'the server answered 404'})),
        'Failed: the server answered 404');
});

test('a queued task says why it waits, in the words of hauld\'s other panels', () => {
    const sentences = {
        sleep: 'Waiting for the computer to wake up', network: 'Waiting for the network',
        unmetered: 'Waiting for a network that is not metered', power: 'Waiting for power saver mode to end',
        retry: 'Waiting to try again', slot: 'Waiting for other transfers to finish',
    };
    for (const [reason, sentence] of Object.entries(sentences)) {
        equal(waitingSentence(task({State: 'queued', WaitingFor: reason})), sentence, reason);
        equal(stateText(task({State: 'queued', WaitingFor: reason})), sentence, reason);
    }
    equal(waitingSentence(task({State: 'queued', WaitingFor: 'a reason of a later hauld'})), 'Queued');
    equal(waitingSentence(task({WaitingFor: 'slot'})), null);
});

test('a row offers what the task allows', () => {
    const path = '/org/haul/Haul1/Tasks/1';
    equal(taskRow(task({path})).path, path, 'the object its actions call');
    const actions = row => [row.canSuspend, row.canResume, row.canCancel];
    equal(actions(taskRow(task())), [true, false, true], 'running');
    equal(actions(taskRow(task({State: 'queued', WaitingFor: 'slot'}))), [true, false, true], 'queued');
    equal(actions(taskRow(task({State: 'suspended'}))), [false, true, true], 'suspended');
    equal(actions(taskRow(task({State: 'canceling'}))), [false, false, false], 'canceling');
    equal(actions(taskRow(task({State: 'completed'}))), [false, false, false], 'completed');
    equal(actions(taskRow(task({Pausable: false, Cancellable: false}))), [false, false, false], 'neither');
});

test('a row shows the application when hauld names one', () => {
    const row = taskRow(task({Application: 'org.mozilla.firefox'}));
    equal(row.title, 'debian.iso — 25 %');
    equal(row.detail, 'org.mozilla.firefox · 25 % of 20.0 MiB · 1.5 MiB/s');
    equal(taskRow(task()).detail, '25 % of 20.0 MiB · 1.5 MiB/s', 'without Application (an older hauld)');
    equal(taskRow(task({Application: ''})).application, '');
    const names = id => ({'org.mozilla.firefox': 'Firefox'})[id] ?? null;
    equal(taskRow(task({Application: 'org.mozilla.firefox'}), names).detail,
        'Firefox · 25 % of 20.0 MiB · 1.5 MiB/s');
    equal(taskRow(task({Application: 'wget'}), names).application, 'wget', 'no desktop file: the id itself');
    equal(menuView({...idle, tasks: [task({Application: 'org.mozilla.firefox'})]}, names).rows[0].application,
        'Firefox');
    equal(taskRow(task({State: 'queued', WaitingFor: 'network'})).title, 'debian.iso — Queued');
});

// MARK: The whole menu

const idle = {onBus: true, responding: true, indicator: {Visible: false}, manager: {DownloadRateLimit: 0}, tasks: []};

test('the icon shows exactly while the indicator is Visible and hauld is on the bus', () => {
    equal(menuView(idle).iconVisible, false);
    equal(menuView({...idle, indicator: {Visible: true}}).iconVisible, true);
    equal(menuView({...idle, indicator: {Visible: true, ActivityCount: 0}}).iconVisible, true, 'the delayed one');
    equal(menuView({...idle, indicator: {Visible: false, ActivityCount: 3}}).iconVisible, false, 'not the count');
    equal(menuView({...idle, onBus: false, indicator: {Visible: true}}).iconVisible, false);
    equal(menuView({}).iconVisible, false);
});

test('the menu lists every task by Id with the actions for all', () => {
    const tasks = [task({Id: 3, Path: '/d/b', State: 'suspended'}), task({Id: 2, Path: '/d/a'})];
    const view = menuView({...idle, tasks});
    equal(view.rows.map(row => row.name), ['a', 'b']);
    equal([view.suspendAll, view.resumeAll, view.cancelAll], [true, true, true]);
    equal(view.status, null);
    const finished = menuView({...idle, tasks: [task({State: 'completed'})]});
    equal([finished.suspendAll, finished.resumeAll, finished.cancelAll], [false, false, false]);
    equal(menuView(idle).status, 'No transfers');
    equal(menuView({onBus: false}).status, 'Haul is not running');
});

test('the download limit is selected among the choices, and an unusual one is added to them', () => {
    const view = menuView({...idle, manager: {DownloadRateLimit: 5 * 1048576}});
    equal(view.limitTitle, 'Download limit: 5 MiB/s');
    equal(view.limits.map(limit => [limit.label, limit.selected]),
        [['None', false], ['1 MiB/s', false], ['5 MiB/s', true], ['10 MiB/s', false]]);
    const unusual = menuView({...idle, manager: {DownloadRateLimit: 2621440}});
    equal(unusual.limits.map(limit => limit.label), ['None', '1 MiB/s', '2.5 MiB/s', '5 MiB/s', '10 MiB/s']);
    equal(unusual.limits.filter(limit => limit.selected).map(limit => limit.value), [2621440]);
    equal(menuView(idle).limitsEnabled, true);
});

test('a hauld that does not respond greys the menu and keeps what it showed', () => {
    const view = menuView({...idle, responding: false, indicator: {Visible: true}, tasks: [task()]});
    equal(view.greyed, true);
    equal(view.status, 'Haul is not responding');
    equal(view.iconVisible, true);
    equal(view.rows.map(row => [row.name, row.canSuspend, row.canResume, row.canCancel]),
        [['debian.iso', false, false, false]]);
    equal([view.suspendAll, view.resumeAll, view.cancelAll, view.limitsEnabled], [false, false, false, false]);
    equal(menuView({...idle, onBus: false, responding: false}).greyed, false, 'gone is not greyed');
});

// MARK: The contract

test('every name the extension uses is in dbus/org.haul.Haul1.xml', () => {
    const text = readText(contractDocument);
    const node = Gio.DBusNodeInfo.new_for_xml(text);
    const members = (name, kind) => node.lookup_interface(name)?.[kind].map(member => member.name) ?? [];
    check(text.includes(`Bus name: ${Contract.BUS_NAME} `), 'the bus name');
    for (const path of [Contract.ROOT_PATH, Contract.MANAGER_PATH, `${Contract.TASKS_PATH}/N`])
        check(text.includes(` ${path} `), `the path ${path}`);
    for (const [iface, methods, properties] of [
        [Contract.MANAGER_INTERFACE, Contract.MANAGER_METHODS, [...Contract.MANAGER_PROPERTIES,
            Contract.DOWNLOAD_LIMIT_PROPERTY]],
        [Contract.INDICATOR_INTERFACE, [], Contract.INDICATOR_PROPERTIES],
        [Contract.TASK_INTERFACE, Contract.TASK_METHODS, Contract.TASK_PROPERTIES],
    ]) {
        for (const method of methods)
            check(members(iface, 'methods').includes(method), `${iface}.${method}`);
        for (const property of properties)
            check(members(iface, 'properties').includes(property), `${iface}.${property}`);
    }
    check(Contract.OPTIONAL_TASK_PROPERTIES.every(name => !Contract.TASK_PROPERTIES.includes(name)), 'optional');
});

test('the menu has a sentence for every reason the contract gives a queued task', () => {
    const text = readText(contractDocument).replace(/\s+/g, ' ');
    const comment = text.match(/<!-- WaitingFor: (.*?)-->/)[1];
    const reasons = [...comment.matchAll(/"([a-z]+)"/g)].map(match => match[1]);
    check(reasons.length >= 6, `reasons read: ${reasons}`);
    for (const reason of new Set(reasons))
        check(waitingSentence(task({State: 'queued', WaitingFor: reason})) !== 'Queued', reason);
});

// MARK: The ES-module form

/** Copies the extension with the shell's modules and St replaced by the stubs, as a shell 45+ would load it. */
function stubbedCopy() {
    const folder = GLib.dir_make_tmp('haul-shell-esm-XXXXXX');
    const stubs = Gio.File.new_for_path(GLib.build_filenamev([here, 'stubs'])).get_uri();
    const enumerator = Gio.File.new_for_path(extensionSource).enumerate_children('standard::name', 0, null);
    for (let info = enumerator.next_file(null); info; info = enumerator.next_file(null)) {
        const name = info.get_name();
        if (!name.endsWith('.js') || name === '__init__.js')
            continue;
        const text = readText(GLib.build_filenamev([extensionSource, name]))
            .replaceAll("'resource:///org/gnome/shell/", `'${stubs}/`)
            .replaceAll("'gi://St'", `'${stubs}/St.js'`);
        check(!text.includes('resource:///'), `${name} imports a shell module the stubs do not have`);
        GLib.file_set_contents(GLib.build_filenamev([folder, name]), text);
    }
    return folder;
}

test('the ES-module form loads, enables into the panel and disables without a trace', async () => {
    const folder = stubbedCopy();
    const {default: HaulExtension} = await import(`file://${folder}/extension.js`);
    const Main = await import(`file://${here}/stubs/ui/main.js`);
    const metadata = JSON.parse(readText(GLib.build_filenamev([extensionSource, 'metadata.json'])));
    const extension = new HaulExtension(metadata);
    extension.enable();
    const indicator = Main.panel.statusArea['haul@haul.org'];
    check(indicator, 'no button in the panel');
    equal(indicator.visible, false, 'no hauld on this bus: no icon');
    const shown = indicator.describe();
    equal(shown.status, 'Haul is not running');
    const labels = shown.items.map(item => item.labels.join(' > '));
    for (const label of ['Suspend all', 'Resume all', 'Cancel all', 'Download limit', 'Open downloads folder'])
        check(labels.includes(label), `no ${label} in ${labels}`);
    equal(indicator.activateItem(['Suspend all']), false, 'nothing to suspend');
    equal(shown.items.find(item => item.labels.join() === 'Download limit,5 MiB/s')?.enabled, false, 'no hauld');
    equal(shown.button, {x: 1000, y: 0, width: 0, height: 0}, 'hidden: no size (NaN in the shell)');

    const {menuView: view} = await import(`file://${folder}/model.js`);
    indicator.update(view({...idle, indicator: {Visible: true}, tasks: [task({Application: 'firefox'})]}));
    const busy = indicator.describe();
    equal(busy.iconVisible, true);
    equal(busy.button, {x: 1000, y: 0, width: 40, height: 32});
    const suspend = busy.items.find(item => item.labels.join() === 'debian.iso,Suspend');
    equal(suspend?.enabled, true, 'the row\'s Suspend');
    equal(busy.items.find(item => item.labels.join() === 'Download limit,None')?.selected, true);
    equal(busy.items.find(item => item.labels.join() === 'Download limit,5 MiB/s')?.enabled, true);
    equal(busy.rows[0].detail, 'firefox · 25 % of 20.0 MiB · 1.5 MiB/s');
    const names = () => indicator.describe().items.filter(item => item.labels.length === 1 && item.labels[0]
        .endsWith('.iso')).map(item => item.labels[0]);
    const rows = ids => ids.map(id => task({Id: id, Path: `/d/${id}.iso`}));
    indicator.update(view({...idle, tasks: rows([2, 4])}));
    equal(names(), ['2.iso', '4.iso']);
    const drawn = indicator._rowSection.items.slice();
    indicator.update(view({...idle, tasks: rows([4, 5])}));
    equal(indicator._rowSection.items.map(item => item.label.text), ['4.iso — 25 %', '5.iso — 25 %']);
    check(indicator._rowSection.items[0] === drawn[1], 'a row that stays is not drawn again');
    indicator.update(view({...idle, tasks: rows([3, 4, 5])}));
    equal(indicator._rowSection.items.map(item => item.label.text),
        ['3.iso — 25 %', '4.iso — 25 %', '5.iso — 25 %'], 'a lower Id: drawn again in order');
    indicator.update(view(idle));
    equal(indicator._rowSection.items, [], 'the rows stay');
    check(!indicator.describe().items.some(item => item.labels[0].endsWith('.iso')), 'the rows\' items stay');

    extension.disable();
    check(indicator.destroyed, 'the button stays');
    equal(Object.keys(Main.panel.statusArea), []);
    extension.enable();
    check(Main.panel.statusArea['haul@haul.org'] !== indicator, 'enabled again: a new button');
    extension.disable();
    GLib.spawn_sync(null, ['rm', '-rf', folder], null, GLib.SpawnFlags.SEARCH_PATH, null);
});

test('metadata.json names the uuid and GNOME Shell 43 to 50', () => {
    const metadata = JSON.parse(readText(GLib.build_filenamev([extensionSource, 'metadata.json'])));
    equal(metadata.uuid, 'haul@haul.org');
    equal(metadata['shell-version'], ['43', '44', '45', '46', '47', '48', '49', '50']);
});

let failed = 0;
for (const {name, body} of tests) {
    try {
        // eslint-disable-next-line no-await-in-loop
        await body();
        print(`ok - ${name}`);
    } catch (error) {
        failed += 1;
        print(`not ok - ${name}\n#   ${error.message}\n#   ${error.stack?.split('\n').join('\n#   ')}`);
    }
}
print(`# ${tests.length - failed} passed, ${failed} failed`);
System.exit(failed > 0 ? 1 : 0);
