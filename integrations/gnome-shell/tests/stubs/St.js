// Stands in for gi://St in tests.js: the widgets the extension makes, as plain records.
export class Icon {
    constructor(params) {
        Object.assign(this, params);
    }
}

export default {Icon};
