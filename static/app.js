console.debug('layoutlab');
