// The folder of the content service's domain sources, for the worker thread's file: the one thing
// an ES module cannot say without import.meta, which the tests' CommonJS transform does not have.
module.exports = __dirname;
