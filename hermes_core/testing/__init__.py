"""The test kit for hermes-core and for provider authors.

Installed as a pytest plugin (``pytest11`` entry point ``hermes``): fixtures only, nothing
autouse, imports deferred until a fixture is used. See docs/testing-providers.md.

* fixtures: ``hermes_home``, ``plugin_manager``, ``register_plugin``, ``memory_host``,
  ``provider_harness``, ``fake_llm``, ``loopback``
* :class:`hermes_core.testing.contract.ProviderContract` — inherit provider checks
* :mod:`hermes_core.testing.fakes` — ``make_turn``, ``make_session_info``
* :class:`hermes_core.testing.fake_llm.FakeLLMServer` — loopback OpenAI-compatible server
* :class:`hermes_core.testing.loopback.LoopbackServer` — loopback double for a service
  provider's API (routes, recorded requests, faults, OpenAPI validation)
* :mod:`hermes_core.testing.offline` — ``block_network`` (the offline guard for a
  conftest), ``serve_double`` / ``serve`` (a loopback double per test, failing on API
  violations), ``provider_factory`` (providers shut down after the test)
* :class:`hermes_core.testing.service_faults.ServiceProviderContract` — the contract plus the
  fault tests every service provider inherits
* :mod:`hermes_core.testing.inspector` — ``forget_and_prove``, ``forget_user_and_prove``,
  ``memories_by_user``: what a provider with the inspector's capabilities must guarantee;
  ``seed_memories`` fills a home for them
* :mod:`hermes_core.testing.service_suite` — ``ProviderSuite``: a provider suite declared once
  in its conftest (``pytest_plugins``), with the ``double``, ``make_provider``,
  ``provider_for``, ``harness_for``, ``harness``, ``session_of`` and ``alice`` fixtures
* :mod:`hermes_core.testing.processes`, :mod:`hermes_core.testing.properties`,
  :mod:`hermes_core.testing.openapi_trim` — a fresh interpreter, hypothesis pieces, the
  OpenAPI trimmer
"""
