"""Insights: how the queue fills and drains, what the judge costs, how agents write."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.insights import insights_for
from zero_memory.web.charts import insight_charts
from zero_memory.web.rendering import render


def index(app: App, request: Request, caller: Caller) -> Response:
    data = insights_for(app, caller)
    return render(request, app, caller, "insights.html", {"data": data, "charts": insight_charts(data)})
