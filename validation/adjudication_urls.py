from django.urls import path

from validation import adjudication_views as views

urlpatterns = [
    path("p/<slug:slug>/adjudicate/", views.adjudication_list, name="adjudication_list"),
    path("p/<slug:slug>/adjudicate/<int:item_id>/", views.adjudication_item, name="adjudication_item"),
    path("p/<slug:slug>/gold/download/", views.gold_download, name="gold_download"),
]
