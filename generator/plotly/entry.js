'use strict';

// The site's Plotly: plotly.js's own src/core.js (scatter, the one trace type every chart here uses) less the
// components no chart uses (3D annotations, images, update menus, sliders, range sliders and selectors).
// build.sh bundles it into generator/assets/plotly-scatter.min.js.

exports.version = require('plotly.js/src/version').version;

// inject promise polyfill
require('native-promise-only');

// inject plot css
require('plotly.js/build/plotcss');

// include registry module and expose register method
var Registry = require('plotly.js/src/registry');
var register = exports.register = Registry.register;

// expose plot api methods
var plotApi = require('plotly.js/src/plot_api');
var methodNames = Object.keys(plotApi);
for(var i = 0; i < methodNames.length; i++) {
    var name = methodNames[i];
    // _ -> private API methods, but still registered for internal use
    if(name.charAt(0) !== '_') exports[name] = plotApi[name];
    register({
        moduleType: 'apiMethod',
        name: name,
        fn: plotApi[name]
    });
}

// scatter is the only trace included by default
register(require('plotly.js/src/traces/scatter'));

// register all registrable components modules
register([
    require('plotly.js/src/components/annotations'),
    require('plotly.js/src/components/selections'),
    require('plotly.js/src/components/shapes'),
    require('plotly.js/src/components/grid'),
    require('plotly.js/src/components/errorbars'),
    require('plotly.js/src/components/colorscale'),
    require('plotly.js/src/components/colorbar'),
    require('plotly.js/src/components/legend'), // legend needs to come after shape | legend defaults depends on shapes
    require('plotly.js/src/components/fx'), // fx needs to come after legend | unified hover defaults depends on legends
    require('plotly.js/src/components/modebar')
]);

// locales en and en-US are required for default behavior
register([
    require('plotly.js/src/locale-en'),
    require('plotly.js/src/locale-en-us')
]);

// locales that are present in the window should be loaded
if(window.PlotlyLocales && Array.isArray(window.PlotlyLocales)) {
    register(window.PlotlyLocales);
    delete window.PlotlyLocales;
}

// plot icons
exports.Icons = require('plotly.js/src/fonts/ploticon');

// unofficial 'beta' plot methods, use at your own risk
var Fx = require('plotly.js/src/components/fx');
var Plots = require('plotly.js/src/plots/plots');

exports.Plots = {
    resize: Plots.resize,
    graphJson: Plots.graphJson,
    sendDataToCloud: Plots.sendDataToCloud
};
exports.Fx = {
    hover: Fx.hover,
    unhover: Fx.unhover,
    loneHover: Fx.loneHover,
    loneUnhover: Fx.loneUnhover
};
exports.Snapshot = require('plotly.js/src/snapshot');
exports.PlotSchema = require('plotly.js/src/plot_api/plot_schema');
